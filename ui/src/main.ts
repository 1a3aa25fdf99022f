import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { applyTheme, readTheme } from './lib/model/theme';

// The theme chosen in Settings, before anything is drawn.
applyTheme(readTheme(localStorage), document.documentElement, localStorage);

const app = mount(App, { target: document.getElementById('app')! });

export default app;
