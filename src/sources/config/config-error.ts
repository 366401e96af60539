/** A problem in the sources config: the file, where in it, what is wrong, and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly file: string;
  readonly jsonPath: string;
  readonly fix: string;

  constructor(details: { file: string; jsonPath: string; problem: string; fix: string; cause?: unknown }) {
    const { file, jsonPath, problem, fix, cause } = details;
    super(`${file} at ${jsonPath}: ${problem}. ${fix}`, cause === undefined ? undefined : { cause });
    this.file = file;
    this.jsonPath = jsonPath;
    this.fix = fix;
  }
}
