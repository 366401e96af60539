// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config's own syntax, not a mistaken template.
import { formatPath, isRecord, type Path } from './config-parsing.js';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** One `${VAR}` written in the config, and where. */
export interface VariableReference {
  variable: string;
  path: Path;
}

/** Every `${VAR}` in the strings of a JSON value, in order, with the path of the string that holds it. */
export const variableReferences = (value: unknown, at: Path = []): VariableReference[] => {
  if (typeof value === 'string')
    return [...value.matchAll(VARIABLE)].map(([, variable]) => ({ variable: variable!, path: at }));
  if (Array.isArray(value)) return value.flatMap((child, index) => variableReferences(child, [...at, index]));
  if (isRecord(value))
    return Object.entries(value).flatMap(([key, child]) => variableReferences(child, [...at, key]));
  return [];
};

/** Replaces each `${VAR}` by `lookUp(VAR)`. */
export const replaceVariables = (text: string, lookUp: (variable: string) => string): string =>
  text.replace(VARIABLE, (_match, variable: string) => lookUp(variable));

const listed = (words: readonly string[]) =>
  words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;

/**
 * Why a server cannot run while some of its `${VAR}` are unset: the variables, where they are
 * written, and the fix. Names only: an unset variable has no value to leak.
 */
export const unsetVariablesReason = (unset: readonly VariableReference[], file: string): string => {
  const variables = [...new Set(unset.map((reference) => reference.variable))];
  const paths = [...new Set(unset.map((reference) => formatPath(reference.path)))];
  const one = variables.length === 1;
  return (
    `${listed(variables.map((variable) => `\${${variable}}`))} ${one ? 'is' : 'are'} not set in the environment ` +
    `(${file} at ${paths.join(', ')}). Export ${listed(variables.map((variable) => `${variable}=…`))} in the shell ` +
    `that starts pulse, then restart pulse (it reads its environment once, at start); or write the value in place of ` +
    `${one ? `\${${variables[0]}}` : 'each'}.`
  );
};
