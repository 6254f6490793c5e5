// The pod terminal: keys go to the console's exec WebSocket as bytes, the
// TTY's output comes back and is drawn as plain text (escape sequences are
// interpreted for the cursor or dropped, never rendered as markup).
import { el } from './dom.js';

const MAX_LINES = 2000;

// Screen keeps lines of text and a cursor: enough of a terminal for a
// shell's line editing (CR, BS, cursor left/right, erase in line) and for
// full-screen programs (vi, top, less): cursor moves and absolute
// positions within the last rows lines, erase in display, and the
// alternate screen they draw on and leave.
export class Screen {
  constructor(rows = 24) { this.lines = ['']; this.row = 0; this.col = 0; this.rows = rows; this.pending = ''; this.saved = null; }

  resize(rows) { this.rows = rows; }

  // top is the index of the screen's first line: the lines above it are
  // scrollback.
  top() { return Math.max(0, this.lines.length - this.rows); }

  write(text) {
    let s = this.pending + text;
    this.pending = '';
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c === '\x1b') {
        const m = /^\x1b(?:\[([0-9;?]*)[ -\/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/.exec(s.slice(i));
        if (!m) {
          // An incomplete sequence: wait for the rest.
          if (s.length - i < 64) { this.pending = s.slice(i); return; }
          continue;
        }
        if (m[2]) this.csi(m[1], m[2]);
        i += m[0].length - 1;
        continue;
      }
      if (c === '\r') this.col = 0;
      else if (c === '\n') this.newline();
      else if (c === '\b') this.col = Math.max(0, this.col - 1);
      else if (c === '\t') this.put(' '.repeat(8 - (this.col % 8)));
      else if (c >= ' ' && c !== '\x7f') this.put(c);
    }
  }

  // goto puts the cursor on screen line r (0-based), adding lines the
  // screen has not drawn yet.
  goto(r) {
    const top = this.top();
    const want = top + Math.max(0, Math.min(r, this.rows - 1));
    while (this.lines.length <= want) this.lines.push('');
    this.row = want;
  }

  csi(params, final) {
    if (params.startsWith('?')) {
      // The alternate screen (1049, 47, 1047): drawn on, then left as it was.
      if (/^\?(1049|1047|47)$/.test(params)) {
        if (final === 'h' && !this.saved) {
          this.saved = { lines: this.lines, row: this.row, col: this.col };
          this.lines = Array(this.rows).fill(''); this.row = 0; this.col = 0;
        } else if (final === 'l' && this.saved) {
          ({ lines: this.lines, row: this.row, col: this.col } = this.saved);
          this.saved = null;
        }
      }
      return;
    }
    const ps = params.split(';').map(p => parseInt(p, 10));
    const n = Math.max(1, ps[0] || 1);
    const line = this.lines[this.row];
    switch (final) {
      case 'A': this.row = Math.max(this.top(), this.row - n); break;
      case 'B': this.goto(this.row - this.top() + n); break;
      case 'C': this.col += n; break;
      case 'D': this.col = Math.max(0, this.col - n); break;
      case 'G': this.col = n - 1; break;
      case 'd': this.goto(n - 1); break;
      case 'H': case 'f': this.goto(n - 1); this.col = Math.max(1, ps[1] || 1) - 1; break;
      case 'K':
        if (params === '' || params === '0') this.lines[this.row] = line.slice(0, this.col);
        else if (params === '1') this.lines[this.row] = ' '.repeat(this.col) + line.slice(this.col);
        else if (params === '2') this.lines[this.row] = '';
        break;
      case 'J':
        if (params === '' || params === '0') { this.lines[this.row] = line.slice(0, this.col); this.lines.length = this.row + 1; }
        else if (params === '2' || params === '3') { const top = this.top(); for (let r = top; r < this.lines.length; r++) this.lines[r] = ''; }
        break;
    }
  }

  put(text) {
    const line = this.lines[this.row].padEnd(this.col);
    this.lines[this.row] = line.slice(0, this.col) + text + line.slice(this.col + text.length);
    this.col += text.length;
  }

  newline() {
    if (this.row < this.lines.length - 1) this.row++;
    else {
      this.lines.push('');
      this.row = this.lines.length - 1;
      if (this.lines.length > MAX_LINES) { this.lines.splice(0, this.lines.length - MAX_LINES); this.row = this.lines.length - 1; }
    }
    this.col = 0;
  }

  text() { return this.lines.join('\n'); }
}

const KEYS = {
  Enter: '\r', Backspace: '\x7f', Tab: '\t', Escape: '\x1b', Delete: '\x1b[3~',
  ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C', ArrowLeft: '\x1b[D', Home: '\x1b[H', End: '\x1b[F',
};

// keyBytes is what a key press sends to the TTY, or null for keys the
// browser keeps (Ctrl-Shift-C to copy, Alt combinations, F keys).
export function keyBytes(ev) {
  if (ev.altKey || ev.metaKey) return null;
  if (ev.ctrlKey) {
    if (ev.shiftKey || ev.key.length !== 1) return null;
    const code = ev.key.toUpperCase().charCodeAt(0);
    // Ctrl-@ .. Ctrl-_: Ctrl-C is 0x03 (the TTY's interrupt), Ctrl-D 0x04 (end of file).
    return code >= 64 && code <= 95 ? String.fromCharCode(code - 64) : null;
  }
  if (KEYS[ev.key]) return KEYS[ev.key];
  return ev.key.length === 1 ? ev.key : null;
}

// terminalPanel is the pod page's terminal: a container choice, a button
// that opens the session, an input that takes the keys and the screen.
export function terminalPanel(pod, csrf) {
  const ns = pod.metadata.namespace, name = pod.metadata.name;
  const containers = (pod.spec?.containers || []).map(c => c.name);
  const sel = el('select', { id: 'term-container' }, containers.map(c => el('option', { value: c }, c)));
  const open = el('button', { type: 'button', id: 'term-open' }, 'Open terminal');
  const close = el('button', { type: 'button', id: 'term-close', disabled: '' }, 'Close terminal');
  const input = el('input', { id: 'term-input', type: 'text', autocomplete: 'off', spellcheck: 'false', disabled: '' });
  const state = el('p', { id: 'term-state', role: 'status' }, 'Not connected.');
  const out = el('pre', { id: 'terminal', class: 'terminal', role: 'log', tabindex: '0', 'aria-label': 'Terminal output' });
  const enc = new TextEncoder();
  let ws = null, screen = null, dirty = false;

  // The TTY's size follows the pane's: measured in character cells, sent
  // (a text message) when it changes, kept in data-size for tests.
  let cell = null;
  const size = () => {
    if (!cell) {
      const probe = el('span', {}, 'M'.repeat(10));
      out.append(probe);
      const r = probe.getBoundingClientRect();
      probe.remove();
      cell = { w: r.width / 10 || 8, h: r.height || 16 };
    }
    const st = getComputedStyle(out);
    const w = out.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    const h = out.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
    return { cols: Math.max(20, Math.floor(w / cell.w)), rows: Math.max(5, Math.floor(h / cell.h)) };
  };
  const sendSize = () => {
    if (ws?.readyState !== WebSocket.OPEN) return;
    const s = size();
    if (out.dataset.size === `${s.cols}x${s.rows}`) return;
    out.dataset.size = `${s.cols}x${s.rows}`;
    screen?.resize(s.rows);
    ws.send(JSON.stringify(s));
  };
  new ResizeObserver(sendSize).observe(out);

  const paint = () => { dirty = false; out.textContent = screen.text(); out.scrollTop = out.scrollHeight; };
  const send = s => { if (ws?.readyState === WebSocket.OPEN) ws.send(enc.encode(s)); };
  const stop = () => { ws?.close(); ws = null; input.setAttribute('disabled', ''); close.setAttribute('disabled', ''); open.removeAttribute('disabled'); };

  open.addEventListener('click', () => {
    stop();
    const dec = new TextDecoder();
    const { cols, rows } = size();
    screen = new Screen(rows);
    out.dataset.size = `${cols}x${rows}`;
    const q = new URLSearchParams({ container: sel.value, csrf: csrf(), cols: String(cols), rows: String(rows) });
    ws = new WebSocket(`wss://${location.host}/api/exec/${encodeURIComponent(ns)}/${encodeURIComponent(name)}?${q}`);
    ws.binaryType = 'arraybuffer';
    state.textContent = 'Connecting…';
    ws.onopen = () => {
      state.textContent = `Connected to ${name}/${sel.value}. Keys typed in the input go to the shell; Ctrl-C interrupts, Ctrl-D ends it.`;
      input.removeAttribute('disabled'); close.removeAttribute('disabled'); open.setAttribute('disabled', '');
      input.focus();
    };
    ws.onmessage = m => {
      if (typeof m.data === 'string') {
        const end = JSON.parse(m.data);
        state.textContent = end.error ? `Session ended: ${end.error}` : `Session ended, exit code ${end.exitCode}.`;
        return;
      }
      screen.write(dec.decode(m.data, { stream: true }));
      if (!dirty) { dirty = true; requestAnimationFrame(paint); }
    };
    ws.onclose = ev => {
      if (!state.textContent.startsWith('Session ended')) state.textContent = `Disconnected${ev.reason ? ': ' + ev.reason : ''} (code ${ev.code}).`;
      stop();
    };
  });
  close.addEventListener('click', stop);
  input.addEventListener('keydown', ev => {
    const b = keyBytes(ev);
    if (b === null) return;
    ev.preventDefault();
    send(b);
  });
  // Keys are sent from keydown; what a key would type is not kept.
  input.addEventListener('input', () => { input.value = ''; });
  input.addEventListener('paste', ev => { ev.preventDefault(); send(ev.clipboardData.getData('text').replace(/\r?\n/g, '\r')); });

  const panel = el('section', { 'aria-labelledby': 'term-heading' }, [
    el('h3', { id: 'term-heading' }, 'Terminal'),
    el('label', { for: 'term-container' }, 'Container '), sel, open, close, state,
    el('label', { for: 'term-input' }, 'Keys for the terminal '), input, out,
  ]);
  return { panel, stop };
}
