import { type Child, nodes, relative } from '../view.js';

// The browser's side of view.ts: the same elements as DOM nodes, every value a text node or an
// attribute value.

const toDom = (child: Child): (globalThis.Node | string)[] =>
  nodes(child).map((node) => {
    if (typeof node === 'string') return node;
    const element = document.createElement(node.tag);
    for (const [name, value] of Object.entries(node.attributes)) element.setAttribute(name, value);
    element.append(...toDom(node.children));
    return element;
  });

/** Replaces what `target` holds with `child`. */
export const fill = (target: HTMLElement, child: Child): void => target.replaceChildren(...toDom(child));

/** Rewrites every relative time on the page as of now. */
export const refreshTimes = (): void => {
  for (const node of document.querySelectorAll<HTMLElement>('time[data-at]'))
    node.textContent = relative(node.dataset.at!);
};
