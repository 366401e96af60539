import type { FileFault } from '../../machines/log-faults.js';

/** One fault as a sentence: "<file> <reason>". */
export const faultSentence = ({ file, reason }: FileFault): string => `${file} ${reason}.`;

/**
 * Why the plan is on hold though no change may be pending: what pulse cannot see or record, what
 * the user must fix, and what the agent does meanwhile.
 */
export const blindReason = (blind: readonly FileFault[]): string =>
  `pulse cannot see or record changes to the guidance or constraints: ${blind.map(faultSentence).join(' ')} ` +
  'Until the user fixes this, treat the guidance and constraints as changed: do not continue the plan; tell the user what to fix, then call pulse_should_interrupt again.';
