import { ConfigError } from './config-error.js';
import { formatPath, type Parsing, type Path } from './config-parsing.js';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces each `${VAR}` from the environment; what it put in is a secret. */
export const expand = (text: string, path: Path, parsing: Parsing): string =>
  text.replace(VARIABLE, (_match, variable: string) => {
    const value = parsing.env[variable];
    if (value === undefined) {
      throw new ConfigError({
        file: parsing.file,
        jsonPath: formatPath(path),
        problem: `\${${variable}} is not set in the environment`,
        fix: `export ${variable}=… before starting pulse.`,
      });
    }
    if (value !== '') parsing.secrets.add(value);
    return value;
  });

/** Expands every value of a record, each at its own key's path. */
export const expandValues = (
  record: Record<string, string>,
  at: Path,
  parsing: Parsing,
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, expand(value, [...at, key], parsing)]),
  );
