import pino, { type DestinationStream, type Logger, type StreamEntry } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { terminalText } from '../text/terminal-text.js';
import type { LogLevel } from './levels.js';
import { createRedactor } from './redact-fields.js';
import { LOG_ROTATION, openRotatingFile, type Rotation } from './rotating-file.js';

/** Where the readable lines go: the daemon's stderr. */
export interface Terminal {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface LoggerOptions {
  level: LogLevel;
  /** The JSON-lines file (rotated); null logs to the terminal only. */
  file: string | null;
  rotation?: Rotation;
  terminal: Terminal;
  /** Colour on the terminal; by default, when it is a TTY and NO_COLOR is not set. */
  colour?: boolean;
  /** The sources' secrets, read at each line and never written. */
  secrets?: () => readonly string[];
}

export interface DaemonLogger {
  logger: Logger;
  /** The file the JSON lines go to, or null when there is none (silent, or it could not be opened). */
  file: string | null;
  /** Silences the logger and closes the file. */
  close(): void;
}

/** The level names as the CLI prints them (`warning:` as pulse always has). */
const terminalLabel = (label: string) => (label === 'WARN' ? 'warning' : label.toLowerCase());

/** Every string of a parsed record, keys included, passed through `clean`. */
const mapStrings = (value: unknown, clean: (text: string) => string): unknown => {
  if (typeof value === 'string') return clean(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, clean));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [clean(key), mapStrings(field, clean)]),
  );
};

/**
 * Readable lines, one per record, written synchronously. pino-pretty's factory rather than its
 * stream: the stream is an asynchronous Transform, and a line logged just before `exit` (the
 * shutdown, a fatal error) would be lost.
 */
const readableLines = (
  terminal: Terminal,
  colour: boolean,
  redact: (text: string) => string,
): DestinationStream => {
  const pretty = prettyFactory({
    colorize: colour,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
    customPrettifiers: {
      // pino-pretty hands no plain label for string levels; the coloured one holds it in capitals.
      level: (_value, _key, _log, { labelColorized }) => labelColorized.replace(/[A-Z]+/, terminalLabel),
    },
  });
  // Titles and stderr lines come from sources, and a terminal obeys the escape sequences they may
  // hold. Only this copy is cleaned: the file keeps the record exact (JSON escapes every control
  // character). Cleaning can join the parts of a secret that a sequence held apart: redact again.
  const clean = (text: string) => redact(terminalText(text));
  return { write: (line: string) => terminal.write(pretty(mapStrings(JSON.parse(line), clean) as object)) };
};

/**
 * The daemon's logger: JSON lines (level, ISO time, msg, fields) to a size-rotated file and the
 * same records as readable lines on the terminal, both at `level`. Every string is redacted of
 * the sources' secrets before it is serialised. A file that cannot be opened is reported on the
 * terminal, and logging goes on there.
 */
export const createLogger = ({
  level,
  file,
  rotation = LOG_ROTATION,
  terminal,
  colour = terminal.isTTY === true && process.env.NO_COLOR === undefined,
  secrets = () => [],
}: LoggerOptions): DaemonLogger => {
  const { redact, redactValue } = createRedactor(secrets);
  const streams: StreamEntry[] = [];
  let fileStream: ReturnType<typeof openRotatingFile> | null = null;
  let fileError: string | null = null;
  const reported = new Set<string>();
  const reportFileError = (error: Error) => {
    if (reported.has(error.message)) return;
    reported.add(error.message);
    terminal.write(`pulse: cannot write the log file ${file}: ${error.message}\n`);
  };
  if (level !== 'silent') {
    if (file !== null) {
      try {
        fileStream = openRotatingFile(file, rotation, reportFileError);
        streams.push({ level, stream: fileStream });
      } catch (error) {
        fileError = (error as Error).message;
      }
    }
    streams.push({ level, stream: readableLines(terminal, colour, redact) });
  }
  const logger = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (record) => redactValue(record) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const redacted = args.map((arg) => (typeof arg === 'string' ? redact(arg) : arg));
          return method.apply(this, redacted as Parameters<typeof method>);
        },
      },
    },
    pino.multistream(streams),
  );
  if (fileError !== null)
    logger.warn(`Cannot write the log file; logging to the terminal only: ${fileError}`);
  return {
    logger,
    file: fileStream === null ? null : file,
    close() {
      // A source server's last words may still come; they go nowhere rather than to a closed file.
      logger.level = 'silent';
      fileStream?.end();
    },
  };
};
