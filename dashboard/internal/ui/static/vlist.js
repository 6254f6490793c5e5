// A table for lists of thousands of rows that keeps only the rows in view
// in the DOM: every row has one height (measured once from the first row
// drawn), a spacer gives the scroller the whole list's height, and a
// repaint draws the window of rows under the scroll position. Keyboard:
// one row's link is in the tab order (roving tabindex); the arrow keys,
// Page Up/Down, Home and End move it through the whole list, scrolling.
import { el } from './dom.js';

const OVERSCAN = 5;

// virtualTable returns the scroller element to place in the page and the
// calls that fill it. renderCells(row) makes a row's td elements; the
// first link among them is the row's keyboard target. rowName(row) is put
// in the row's data-name.
export function virtualTable(label, renderCells, rowName) {
  const scroller = el('div', { class: 'scroller', tabindex: '0', role: 'region', 'aria-label': `${label} list` });
  const spacer = el('div');
  const table = el('table', { 'aria-label': label });
  spacer.append(table);
  scroller.append(spacer);

  const rows = new Map();
  let order = [], stale = false, head = el('tr'), headNames = null;
  let rowH = 0, headH = 0, queued = false;
  let cursor = '', cursorAt = 0;
  // The rows drawn last, by key, with the row object each was drawn from:
  // an unchanged row keeps its element while the list scrolls.
  let drawn = new Map();

  function columns(names) {
    if (headNames && names.length === headNames.length && names.every((n, i) => n === headNames[i])) return;
    headNames = names;
    head = el('tr', { 'aria-rowindex': '1' }, names.map(n => el('th', { scope: 'col' }, n)));
    drawn = new Map();
    schedule();
  }
  function set(key, row) { if (!rows.has(key)) stale = true; rows.set(key, row); }
  function remove(key) { if (rows.delete(key)) stale = true; }
  function reset() { rows.clear(); order = []; stale = false; drawn = new Map(); }

  function measure() {
    const r = table.rows[1];
    if (!rowH && r) {
      rowH = r.getBoundingClientRect().height || 0;
      headH = table.rows[0].getBoundingClientRect().height || rowH;
    }
  }
  // The first and last rows wholly visible below the sticky header.
  function visible() {
    const h = rowH || 23;
    const top = Math.ceil(scroller.scrollTop / h);
    const last = Math.floor((scroller.scrollTop + (scroller.clientHeight || 600) - (headH || h)) / h) - 1;
    return [top, Math.max(top, last)];
  }

  function paint() {
    queued = false;
    if (stale) { order = [...rows.keys()]; stale = false; }
    const focused = table.contains(document.activeElement);
    if (!rows.has(cursor)) {
      cursorAt = Math.max(0, Math.min(cursorAt, order.length - 1));
      cursor = order[cursorAt] || '';
    } else if (order[cursorAt] !== cursor) cursorAt = order.indexOf(cursor);
    const h = rowH || 23;
    spacer.style.height = `${(headH || h) + order.length * h}px`;
    table.setAttribute('aria-rowcount', String(order.length + 1));
    const first = Math.max(0, Math.floor(scroller.scrollTop / h) - OVERSCAN);
    const n = Math.ceil((scroller.clientHeight || 600) / h) + 2 * OVERSCAN;
    table.style.transform = `translateY(${first * h}px)`;
    const next = new Map();
    const trs = [head];
    for (let i = first; i < Math.min(order.length, first + n); i++) {
      const k = order[i], r = rows.get(k);
      let tr = drawn.get(k);
      if (!tr || tr.row !== r) {
        tr = el('tr', { 'data-name': rowName(r) }, renderCells(r));
        tr.row = r;
        tr.dataset.key = k;
      }
      tr.setAttribute('aria-rowindex', String(i + 2));
      const link = tr.querySelector('a');
      if (link) link.tabIndex = k === cursor ? 0 : -1;
      next.set(k, tr);
      trs.push(tr);
    }
    drawn = next;
    // The cursor's row scrolled out of the window: the first row drawn
    // takes its place in the tab order, so Tab still enters the list.
    if (!drawn.has(cursor) && trs[1]) trs[1].querySelector('a')?.setAttribute('tabindex', '0');
    table.replaceChildren(...trs);
    if (!rowH) {
      measure();
      if (rowH && rowH !== h) return paint();
    }
    // Replacing the rows blurs the one focused: give focus back to it, or
    // to the scroller when it scrolled away, never to the page's body.
    if (focused && document.activeElement !== drawn.get(cursor)?.querySelector('a')) {
      (drawn.get(cursor)?.querySelector('a') || scroller).focus({ preventScroll: true });
    }
  }
  function schedule() { if (!queued) { queued = true; requestAnimationFrame(paint); } }

  // moveTo puts the cursor on row i, scrolled into view, and focuses it.
  function moveTo(i) {
    if (stale) { order = [...rows.keys()]; stale = false; }
    if (!order.length) return;
    i = Math.max(0, Math.min(order.length - 1, i));
    cursor = order[i]; cursorAt = i;
    const h = rowH || 23;
    const minTop = (headH || h) + (i + 1) * h - scroller.clientHeight;
    if (scroller.scrollTop > i * h) scroller.scrollTop = i * h;
    else if (scroller.scrollTop < minTop) scroller.scrollTop = minTop;
    paint();
    drawn.get(cursor)?.querySelector('a')?.focus({ preventScroll: true });
  }
  table.addEventListener('focusin', ev => {
    const tr = ev.target.closest('tr');
    if (tr?.dataset.key && tr.dataset.key !== cursor) {
      const prev = drawn.get(cursor)?.querySelector('a');
      if (prev) prev.tabIndex = -1;
      cursor = tr.dataset.key;
      cursorAt = Number(tr.getAttribute('aria-rowindex')) - 2;
      ev.target.tabIndex = 0;
    }
  });
  table.addEventListener('keydown', ev => {
    if (!ev.target.closest('tr')?.dataset.key || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const [top, last] = visible();
    const page = Math.max(1, last - top);
    const to = { ArrowDown: cursorAt + 1, ArrowUp: cursorAt - 1, PageDown: cursorAt + page, PageUp: cursorAt - page, Home: 0, End: order.length - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    moveTo(to);
  });
  scroller.addEventListener('scroll', schedule);
  // A resized pane shows more or fewer rows; a zoom or a new font changes
  // their height: measure again.
  new ResizeObserver(() => { rowH = 0; headH = 0; schedule(); }).observe(scroller);

  return { element: scroller, columns, set, remove, reset, schedule, paint, size: () => rows.size };
}
