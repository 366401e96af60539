// The page's markup as plain data, built once per status by the card renderers (cards.ts) and
// turned into HTML text by the server (html.ts) or into DOM nodes by the browser (client/dom.ts):
// one renderer, two outputs, so the first view and the live one cannot drift apart. Every value
// is a text node or an attribute value, never markup: titles come from sources and file names
// from the user, and neither may become HTML.

/** An element: its tag, attributes and children. */
export interface Element {
  tag: string;
  attributes: Readonly<Record<string, string>>;
  children: readonly Node[];
}

/** What the page is made of: elements and text. */
export type Node = Element | string;

/** What an element may hold: nodes; nothing for null, undefined, false and ''. */
export type Child = Node | null | undefined | false | readonly Child[];

type Attributes = Record<string, string | number | boolean | null | undefined>;

const flatten = (child: Child, into: Node[]): Node[] => {
  if (Array.isArray(child)) for (const inner of child) flatten(inner, into);
  else if (child !== null && child !== undefined && child !== false && child !== '') into.push(child as Node);
  return into;
};

/** An element with attributes (null, undefined and false ones left out) and children. */
export const h = (tag: string, attributes: Attributes = {}, ...children: Child[]): Element => ({
  tag,
  attributes: Object.fromEntries(
    Object.entries(attributes)
      .filter(([, value]) => value !== null && value !== undefined && value !== false)
      .map(([name, value]) => [name, String(value)]),
  ),
  children: flatten(children, []),
});

/** The nodes `child` stands for, with the empty ones left out. */
export const nodes = (child: Child): Node[] => flatten(child, []);

/** How far `iso` is from `now`, in words: `in 5 min`, `3 h ago`, `now`. */
export const relative = (iso: string, now = Date.now()): string => {
  const ms = Date.parse(iso) - now;
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

/** A time shown relative to now (kept current by the client), exact on hover; `none` when there is none. */
export const time = (iso: string | null, none = '–'): Element =>
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

/** An actor's internal state name as a small chip coloured by how well it is doing. */
export const chip = (state: string): Element => h('span', { class: `chip ${tone(state)}` }, state);

export const none = (text: string): Element => h('span', { class: 'muted' }, text);

export const error = (text: string | null): Element | null =>
  text ? h('span', { class: 'error' }, text) : null;

/** A term and what it holds; a falsy row is left out. */
export type Row = readonly [string, Child] | false | null | '' | undefined;

export const rows = (pairs: readonly Row[]): Element =>
  h(
    'dl',
    {},
    pairs.map((pair) => (pair ? [h('dt', {}, pair[0]), h('dd', {}, pair[1])] : null)),
  );

/** A table with a heading row, or `empty` when there are no rows. */
export const table = (headings: readonly string[], body: readonly Child[][], empty: string): Element =>
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
