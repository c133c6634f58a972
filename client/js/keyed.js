// Lists updated in place. A list polled every second must not rebuild its rows each time:
// a person's press (mouse down, a pause, up) on a button replaced in between is lost, and so
// is the keyboard's focus. Each row has a key (a seek's id, a tournament's) and a signature
// of what it shows; a row is built again only when its signature changed, and rows move only
// when the order changed.

/**
 * Makes `box`'s rows those of `items`, in order: `keyOf(item)` names a row, `sigOf(item)`
 * says what it shows (a string), `build(item)` makes its element. Children without a key
 * (a "nothing here" line) go. Returns the rows by key.
 */
export function syncList(box, items, keyOf, sigOf, build) {
  const old = new Map();
  for (const el of [...box.children]) {
    if (el.dataset.key === undefined) el.remove();
    else old.set(el.dataset.key, el);
  }
  const rows = new Map();
  let prev = null;
  for (const item of items) {
    const key = String(keyOf(item));
    const sig = String(sigOf(item));
    let el = old.get(key);
    old.delete(key);
    if (!el || el.dataset.sig !== sig) {
      const fresh = build(item);
      fresh.dataset.key = key;
      fresh.dataset.sig = sig;
      if (el) el.replaceWith(fresh);
      el = fresh;
    }
    const at = prev ? prev.nextSibling : box.firstChild;
    if (at !== el) box.insertBefore(el, at);
    prev = el;
    rows.set(key, el);
  }
  for (const el of old.values()) el.remove();
  return rows;
}

/** Shows `line` (an element with an id) alone in `box` when a list is empty, once. */
export function showEmpty(box, line) {
  if (box.children.length === 1 && box.firstChild.id === line.id) return;
  while (box.firstChild) box.removeChild(box.firstChild);
  box.append(line);
}
