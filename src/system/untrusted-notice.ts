import type { SourcesTrust } from '../../machines/sources-context.js';
import type { UntrustedStatus } from './system-status.js';

const listed = (names: readonly string[]) =>
  names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;

/** What pulse did not do while sources.json is untrusted, in one sentence with the one command that trusts it. */
export const untrustedStatus = (
  trust: { hash: string; command: string; model: string | null },
  servers: readonly string[],
): UntrustedStatus => {
  const parts = [
    servers.length === 0
      ? 'pulse started none of its servers'
      : `pulse started none of its servers (${listed(servers.map((name) => `"${name}"`))})`,
    ...(trust.model === null ? [] : [`did not ask its model endpoint (${trust.model})`]),
  ];
  const refused = `.pulse/sources.json is not trusted (${trust.hash}): ${parts.join(' and ')}, connected to nothing and read no variable.`;
  return {
    hash: trust.hash,
    command: trust.command,
    servers: [...servers],
    model: trust.model,
    refused,
    notice: `${refused} To trust it: ${trust.command}`,
  };
};

/** The sources supervisor's context as status reads it: the notice while its file is untrusted, else null. */
export const untrustedOf = (context: {
  trust: SourcesTrust;
  servers: readonly { name: string }[];
}): UntrustedStatus | null =>
  context.trust.status === 'untrusted'
    ? untrustedStatus(
        context.trust,
        context.servers.map((server) => server.name),
      )
    : null;
