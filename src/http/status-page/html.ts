import { type Child, nodes } from './view.js';

// The server's side of view.ts: the same elements as HTML text, every value escaped.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` safe inside an element or a double-quoted attribute value. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** The elements `child` stands for, as HTML. Tags and attribute names come from the renderers, never from data. */
export const toHtml = (child: Child): string =>
  nodes(child)
    .map((node) =>
      typeof node === 'string'
        ? escapeHtml(node)
        : `<${node.tag}${Object.entries(node.attributes)
            .map(([name, value]) => ` ${name}="${escapeHtml(value)}"`)
            .join('')}>${toHtml(node.children)}</${node.tag}>`,
    )
    .join('');
