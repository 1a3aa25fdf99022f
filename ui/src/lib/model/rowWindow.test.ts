import { describe, expect, it } from 'vitest';
import { rowWindow } from './rowWindow';

describe('rowWindow', () => {
  it('takes the rows in view and the overscan on each side', () => {
    // 58 px rows, a 580 px view scrolled to row 100.
    expect(rowWindow(100 * 58, 580, 58, 200, 4)).toEqual({ first: 96, last: 114 });
  });

  it('starts at the first row while the list begins below the top of the view', () => {
    expect(rowWindow(-300, 580, 58, 200, 4)).toEqual({ first: 0, last: 9 });
  });

  it('never reaches past the list, even scrolled beyond a list that just shrank', () => {
    expect(rowWindow(190 * 58, 580, 58, 200, 4)).toEqual({ first: 186, last: 200 });
    expect(rowWindow(190 * 58, 580, 58, 5, 4)).toEqual({ first: 5, last: 5 });
    expect(rowWindow(0, 580, 58, 0, 4)).toEqual({ first: 0, last: 0 });
  });
});
