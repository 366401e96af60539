import { type ClientInfo, type PartyKey, readParty } from '../../machines/agent-identity.js';
import { clientProduct, hookProduct } from '../../machines/agent-products.js';
import { terminalText } from '../text/terminal-text.js';

/** What an agent is named by: its parties, and the `clientInfo` its client sent, if any. */
export interface NamedAgent {
  parties: readonly PartyKey[];
  client?: ClientInfo | null | undefined;
}

/** A client's own words, safe on a terminal and a page line: no controls, bounded. */
const said = (text: string, limit: number): string => {
  const clean = terminalText(text).trim();
  return clean.length > limit ? `${clean.slice(0, limit)}…` : clean;
};

const short = (id: string): string => said(id, 8);

const productOf = (client: ClientInfo): string =>
  clientProduct(client) ?? (said(client.name, 40) || 'an MCP client');

/**
 * An agent as its user knows it: the product its client said it is, with its version, then what
 * tells it apart, e.g. `Claude Code 2.1.332 (session 3f2a9c01…)`; an agent known only by its hooks
 * is named by its host (`Claude Code (hook session 4f1c2b3a…)`).
 */
export const agentLabel = ({ parties, client }: NamedAgent): string => {
  const identities = parties.map(readParty);
  const hookHost = identities.find((p) => p.kind === 'hook')?.host;
  const base = client ? productOf(client) : hookHost === undefined ? undefined : hookProduct(hookHost);
  const version = client ? said(client.version, 20) : '';
  const product = base === undefined || version === '' ? base : `${base} ${version}`;
  const marks = identities.map((p): string => {
    if (p.kind === 'session') return `session ${short(p.id)}`;
    if (p.kind === 'handle') return `handle ${short(p.handle)}`;
    if (p.kind === 'named') return `agent ${said(p.name, 40)}`;
    if (p.kind === 'one-shot') return 'one-shot';
    return hookProduct(p.host) === base || base === undefined
      ? `hook session ${short(p.session)}`
      : `${said(p.host, 20)} hook session ${short(p.session)}`;
  });
  if (product !== undefined) return `${product} (${marks.join(', ')})`;
  if (marks.length === 1 && marks[0] === 'one-shot') return 'a one-shot caller';
  if (marks.length === 0) return 'an unknown agent';
  return identities.some((p) => p.kind === 'session' || p.kind === 'handle')
    ? `an MCP client (${marks.join(', ')})`
    : marks.join(' + ');
};
