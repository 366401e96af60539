import type { Parsing, Path } from './config-parsing.js';
import { replaceVariables, type VariableReference, variableReferences } from './variables.js';

/** The `${VAR}` of a server's strings that the environment does not set; the server cannot run while any is. */
export const unsetVariables = (server: unknown, at: Path, parsing: Parsing): VariableReference[] =>
  variableReferences(server, at).filter(({ variable }) => parsing.env[variable] === undefined);

/** Replaces each `${VAR}` from the environment (all of them set: see `unsetVariables`); what it put in is a secret. */
export const expand = (text: string, parsing: Parsing): string =>
  replaceVariables(text, (variable) => {
    const value = parsing.env[variable] ?? '';
    if (value !== '') parsing.secrets.add(value);
    return value;
  });

/** Expands every value of a record. */
export const expandValues = (record: Record<string, string>, parsing: Parsing): Record<string, string> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expand(value, parsing)]));
