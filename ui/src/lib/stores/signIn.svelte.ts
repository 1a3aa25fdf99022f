// Starting a sign-in from any button (issue 17). Before the browser opens
// again for a server that answered `insufficient_scope`, the user sees which
// scopes it asks for and why, and chooses Continue or Cancel. A sign-in that
// fails because the server needs a pre-registered OAuth app offers to open
// the server's Edit form at its OAuth app section.

import { api } from '../api';
import { ErrorCode } from '../types';
import { engine } from './engine.svelte';
import { navigation } from './navigation.svelte';

export interface StepUpRequest {
  server: string;
  scopes: string[];
  reason: string | null;
}

/** The buttons a failed sign-in's notice offers, by error code. */
export function signInActions(server: string) {
  return {
    [ErrorCode.OauthNoRegistration]: {
      label: 'Set up OAuth app',
      run: () => navigation.editServer(server, 'oauth'),
    },
  };
}

class SignInFlow {
  /** A step-up waiting for the user's Continue or Cancel. */
  stepUp = $state<StepUpRequest | null>(null);

  async start(server: string): Promise<void> {
    let step = null;
    try {
      step = await api.stepUp(server);
    } catch {
      // Not knowing what the server asked for is no reason not to sign in.
    }
    if (step) {
      this.stepUp = { server, scopes: step.scopes, reason: step.reason };
      return;
    }
    await engine.signIn(server, signInActions(server));
  }

  async continue(): Promise<void> {
    const s = this.stepUp;
    this.stepUp = null;
    if (s) await engine.signIn(s.server, signInActions(s.server));
  }

  cancel() {
    this.stepUp = null;
  }
}

export const signInFlow = new SignInFlow();
