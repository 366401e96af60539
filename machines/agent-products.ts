import type { ClientInfo } from './agent-identity.js';

/** Products by the `clientInfo.name` their MCP clients send (checked against the real CLIs), first match wins. */
const CLIENT_PRODUCTS: readonly [RegExp, string][] = [
  [/^claude-code\b/i, 'Claude Code'],
  [/^codex\b/i, 'Codex'],
  [/^gemini-cli\b/i, 'Gemini CLI'],
  [/copilot/i, 'Copilot CLI'],
  [/^opencode\b/i, 'opencode'],
  [/^cursor\b/i, 'Cursor'],
  [/^visual studio code\b/i, 'Visual Studio Code'],
];

/** Products by the host of a hook route (`/hook/<host>/…`). */
const HOOK_PRODUCTS: Readonly<Record<string, string>> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  copilot: 'Copilot CLI',
  opencode: 'opencode',
  cursor: 'Cursor',
  vscode: 'Visual Studio Code',
};

/** Hosts whose MCP client sends, in each tool call's `_meta`, the id its hooks name the call by (Claude Code's `claudecode/toolUseId`). */
const ECHOES_USE_ID: ReadonlySet<string> = new Set(['claude']);

/** Whether a host's MCP requests carry the tool-call id its hook input gives (`tool_use_id`). */
export const echoesUseId = (host: string): boolean => ECHOES_USE_ID.has(host);

/** The product a client's `clientInfo` names, or undefined for a client pulse does not know. */
export const clientProduct = (client: ClientInfo): string | undefined =>
  CLIENT_PRODUCTS.find(([name]) => name.test(client.name))?.[1];

/** The product whose hooks a host's route serves, or undefined for an unknown host. */
export const hookProduct = (host: string): string | undefined =>
  Object.hasOwn(HOOK_PRODUCTS, host) ? HOOK_PRODUCTS[host] : undefined;

/**
 * Whether an MCP client and a host's hook session may be one agent: not when the client named a
 * product pulse knows and it is another (the hosts' own clients all name theirs).
 */
export const mayBeOneAgent = (client: ClientInfo | null, host: string): boolean => {
  const product = client === null ? undefined : clientProduct(client);
  return product === undefined || product === hookProduct(host);
};
