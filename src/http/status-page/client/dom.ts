// Every value reaches the page as a text node or an attribute value, never as markup: titles
// come from sources and file names from the user, and neither may become HTML.

/** What an element may hold: nodes and text; nothing for null, undefined, false and ''. */
export type Child = Node | string | null | undefined | false | readonly Child[];

type Attributes = Record<string, string | number | boolean | null | undefined>;

const append = (node: HTMLElement, child: Child) => {
  if (Array.isArray(child)) for (const inner of child) append(node, inner);
  else if (child !== null && child !== undefined && child !== false && child !== '')
    node.append(child as Node | string);
};

/** An element with attributes (null, undefined and false ones left out) and children. */
export const h = (tag: string, attributes: Attributes = {}, ...children: Child[]): HTMLElement => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children) append(node, child);
  return node;
};

/** Replaces what `node` holds with `children`. */
export const fill = (node: HTMLElement, ...children: Child[]): void => {
  node.replaceChildren();
  for (const child of children) append(node, child);
};

/** How far `iso` is from now, in words: `in 5 min`, `3 h ago`, `now`. */
export const relative = (iso: string): string => {
  const ms = Date.parse(iso) - Date.now();
  const s = Math.abs(ms) / 1000;
  if (s < 1) return 'now';
  const text =
    s < 60
      ? `${Math.floor(s)} s`
      : s < 3600
        ? `${Math.floor(s / 60)} min`
        : s < 172800
          ? `${Math.floor(s / 3600)} h`
          : `${Math.floor(s / 86400)} d`;
  return ms > 0 ? `in ${text}` : `${text} ago`;
};

/** A time shown relative to now (kept current by `main.ts`), exact on hover; `none` when there is none. */
export const time = (iso: string | null, none = '–'): HTMLElement =>
  iso
    ? h('time', { datetime: iso, title: iso, 'data-at': iso }, relative(iso))
    : h('span', { class: 'muted' }, none);

const tone = (state: string) =>
  /fail|backingOff|stopped/i.test(state)
    ? 'bad'
    : /pending|awaiting|offered|catchingUp/.test(state)
      ? 'warn'
      : /disabled|loading|starting/.test(state)
        ? ''
        : 'ok';

/** An actor's state as a chip coloured by how well it is doing. */
export const chip = (state: string): HTMLElement => h('span', { class: `chip ${tone(state)}` }, state);

export const none = (text: string): HTMLElement => h('span', { class: 'muted' }, text);

export const error = (text: string | null): HTMLElement | null =>
  text ? h('span', { class: 'error' }, text) : null;

/** A term and what it holds; a falsy row is left out. */
export type Row = readonly [string, Child] | false | null | '' | undefined;

export const rows = (pairs: readonly Row[]): HTMLElement =>
  h(
    'dl',
    {},
    pairs.map((pair) => (pair ? [h('dt', {}, pair[0]), h('dd', {}, pair[1])] : null)),
  );

/** A table with a heading row, or `empty` when there are no rows. */
export const table = (headings: readonly string[], body: readonly Child[][], empty: string): HTMLElement =>
  body.length === 0
    ? h('p', { class: 'muted' }, empty)
    : h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            headings.map((heading) => h('th', {}, heading)),
          ),
        ),
        h(
          'tbody',
          {},
          body.map((cells) =>
            h(
              'tr',
              {},
              cells.map((cell) => h('td', {}, cell)),
            ),
          ),
        ),
      );
