/** One thing `pulse doctor` checked: what holds, or what is wrong and the exact step that fixes it. */
export interface Finding {
  /** What was checked: `project`, `daemon`, an agent's setup (`claude`, `codex`, `opencode`, `cursor`, `vscode`), a working `agent`, or `git`. */
  subject: string;
  ok: boolean;
  message: string;
  /** For a problem: the command to run, or the edit to make. */
  fix?: string;
}

export const holds = (subject: string, message: string): Finding => ({ subject, ok: true, message });

export const problem = (subject: string, message: string, fix: string): Finding => ({
  subject,
  ok: false,
  message,
  fix,
});
