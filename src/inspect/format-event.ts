import type { StatelyInspectionEvent } from '@statelyai/inspect';
import { terminalText } from '../text/terminal-text.js';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `HH:MM:SS.mmm` local time of an inspection event's `createdAt` (ms since the epoch, as a string). */
const timeOf = (createdAt: string) => {
  const date = new Date(Number(createdAt));
  if (Number.isNaN(date.getTime())) return '--:--:--.---';
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
};

/** A state value as dotted paths: `running.waiting`, or `a.x, b.y` for parallel states. */
export const formatStateValue = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return Object.entries(value)
    .map(([key, child]) =>
      child !== null && typeof child === 'object' && Object.keys(child).length === 0
        ? key
        : `${key}.${formatStateValue(child)}`,
    )
    .join(', ');
};

/**
 * Turns inspection events into readable lines, remembering each actor's name (its system id)
 * from its registration, so later events name it rather than its session id. A line is safe for
 * a terminal: actor names carry source names from the config.
 */
export const createEventFormatter = () => {
  const names = new Map<string, string>();
  const nameOf = (sessionId: string | undefined) =>
    sessionId === undefined ? 'outside' : (names.get(sessionId) ?? sessionId);
  const describe = (event: StatelyInspectionEvent): string | null => {
    const time = timeOf(event.createdAt);
    switch (event.type) {
      case '@xstate.actor': {
        names.set(event.sessionId, event.name);
        const parent = event.parentId === undefined ? '' : ` (child of ${nameOf(event.parentId)})`;
        return `${time}  ${event.name}  started${parent}`;
      }
      case '@xstate.event':
        return `${time}  ${nameOf(event.sessionId)}  event ${event.event.type}  from ${nameOf(event.sourceId)}`;
      case '@xstate.snapshot': {
        const snapshot = event.snapshot as { status?: string; value?: unknown };
        // A promise or callback actor (and a machine without states) has no state value, only a status.
        const value = snapshot.value === undefined ? '' : formatStateValue(snapshot.value);
        const status = snapshot.status ?? '?';
        const state = value === '' ? status : status === 'active' ? value : `${value} (${status})`;
        return `${time}  ${nameOf(event.sessionId)}  state ${state}`;
      }
      default:
        return null;
    }
  };
  return (event: StatelyInspectionEvent): string | null => {
    const line = describe(event);
    return line === null ? null : terminalText(line);
  };
};
