/** What an edit makes of one file: nothing to do, a new text, or a refusal saying why and how to fix it. */
export type EditOutcome =
  | { kind: 'unchanged' }
  /** `replaced` names the user's entry that `--force` replaced. */
  | { kind: 'write'; text: string; replaced?: string }
  /** The file has a `pulse` entry of its own, left alone unless `--force`. */
  | { kind: 'conflict'; problem: string; fix: string }
  /** The file cannot be edited safely (it does not parse, or has a shape pulse does not edit). */
  | { kind: 'invalid'; problem: string; fix: string };

export interface EditOptions {
  force: boolean;
  /** The command line that would replace a conflicting entry, for the conflict's fix. */
  forceCommand: string;
}

/** Turns a file's current text (null: it does not exist) into an outcome; pure, so it can be previewed. */
export type FileEdit = (current: string | null, options: EditOptions) => EditOutcome;

/** What a change to a parsed document did: as an outcome, without the new text. */
export type ChangeResult =
  | { kind: 'unchanged' }
  | { kind: 'changed'; replaced?: string }
  | Extract<EditOutcome, { kind: 'conflict' | 'invalid' }>;
