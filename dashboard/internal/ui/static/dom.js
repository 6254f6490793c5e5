// Small DOM helpers: text goes in as text nodes only.
export function el(tag, attrs = {}, children = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of [].concat(children)) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

export function clear(e) { while (e.firstChild) e.firstChild.remove(); }

// diffLines returns a - / + / space prefixed line diff (LCS), bounded so a
// huge object cannot stall the page.
export function diffLines(a, b) {
  const x = a.split('\n'), y = b.split('\n');
  if (x.length * y.length > 4e6) return ['(too large to diff)'];
  const m = x.length, n = y.length;
  const t = Array.from({ length: m + 1 }, () => new Uint32Array(n + 1));
  for (let i = m - 1; i >= 0; i--) for (let j = n - 1; j >= 0; j--) t[i][j] = x[i] === y[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < m && j < n) {
    if (x[i] === y[j]) { i++; j++; } else if (t[i + 1][j] >= t[i][j + 1]) out.push('- ' + x[i++]); else out.push('+ ' + y[j++]);
  }
  while (i < m) out.push('- ' + x[i++]);
  while (j < n) out.push('+ ' + y[j++]);
  return out.length ? out : ['(no change)'];
}
