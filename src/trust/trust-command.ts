import { pulse, shellWord } from '../package/pulse-command.js';

/** The one command that trusts a project's sources.json, as every refusal names it. */
export const trustCommand = (projectRoot: string): string =>
  pulse(`trust -p ${shellWord(projectRoot)}`, { anywhere: true });
