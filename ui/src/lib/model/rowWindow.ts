/**
 * Which rows of a windowed list of fixed-height rows are in the page: those
 * in view plus `overscan` on each side. `top` is how far the list's first
 * row is scrolled past the top of the view (negative while the list starts
 * below it). Shared by VirtualList and the Servers table.
 */
export function rowWindow(
  top: number,
  height: number,
  rowHeight: number,
  count: number,
  overscan: number,
): { first: number; last: number } {
  const first = Math.max(0, Math.min(count, Math.floor(top / rowHeight) - overscan));
  const last = Math.max(first, Math.min(count, Math.ceil((top + height) / rowHeight) + overscan));
  return { first, last };
}
