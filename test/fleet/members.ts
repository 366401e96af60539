import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import { FLEET_STREAM, projectSubjects } from '../../src/fleet/fleet-messages.js';
import type { FleetState } from '../../src/fleet/fleet-state.js';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { trackStarted } from '../support/started.js';
import { type NatsServer, startNats } from './nats-server.js';

/** The one repository every member clones, under the three spellings of its remote a user may have. */
export const ORIGINS = [
  'git@github.com:acme/widget.git',
  'https://github.com/acme/widget',
  'ssh://git@github.com/acme/widget.git',
];
/** Its fleet project key, as every member computes it. */
export const KEY = 'git:github.com/acme/widget';

/** One machine of a test fleet: its HOME, its own clone of the repository, its daemon. */
export interface Member {
  home: string;
  project: string;
  daemon: RunningDaemon;
  env: Record<string, string>;
  /** Starts its daemon again on the same HOME and clone. */
  restart(): Promise<void>;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, ...args], { stdio: 'ignore' });

/** A member: a fresh HOME and clone (origin `origin`), its daemon started with `--fleet url`. */
export const startMember = async (
  started: ReturnType<typeof trackStarted>,
  url: string,
  origin: string,
  extraEnv: Record<string, string> = {},
): Promise<Member> => {
  const home = await tempProject('pulse-fleet-home-');
  const project = join(home, 'widget');
  mkdirSync(project);
  git(project, 'init', '-q');
  git(project, 'remote', 'add', 'origin', origin);
  started.projects.push(home);
  const env = { HOME: home, XDG_STATE_HOME: join(home, '.local', 'state'), ...extraEnv };
  const member: Member = {
    home,
    project,
    env,
    daemon: await startDaemon(project, { args: ['--fleet', url], env }),
    async restart() {
      member.daemon = await startDaemon(project, { args: ['--fleet', url], env });
      started.daemons.push(member.daemon);
    },
  };
  started.daemons.push(member.daemon);
  return member;
};

/** What the member's pulse.log holds. */
export const pulseLog = (member: Member): string => {
  try {
    return readFileSync(join(member.project, '.pulse', 'pulse.log'), 'utf8');
  } catch {
    return '';
  }
};

/** Waits until the member's log has said `pattern` `times` times. */
export const logged = (member: Member, pattern: RegExp, times = 1, timeoutMs = 15_000) =>
  waitUntil(() => (pulseLog(member).match(new RegExp(pattern, 'g')) ?? []).length >= times, {
    timeoutMs,
    describe: () => `${pattern} x${times} in ${member.project}'s log:\n${pulseLog(member).slice(-3000)}`,
  });

/** The member's guidance.md, or null. */
export const guidanceOf = (member: Member): string | null => {
  try {
    return readFileSync(join(member.project, '.pulse', 'guidance.md'), 'utf8');
  } catch {
    return null;
  }
};

/** The member's kept fleet state (`<state>/pulse-agent/fleet/<project id>.json`). */
export const fleetStateOf = (member: Member): FleetState => {
  const dir = join(member.env.XDG_STATE_HOME!, 'pulse-agent', 'fleet');
  try {
    const file = readdirSync(dir).find((name) => name.startsWith('widget-'));
    if (file !== undefined) return JSON.parse(readFileSync(join(dir, file), 'utf8')) as FleetState;
  } catch {}
  return { applied: {}, outbox: [], seen: {} };
};

/** A real MCP session client working in the member's project (a check-in makes it an agent). */
export const agentOn = async (started: ReturnType<typeof trackStarted>, member: Member): Promise<Client> => {
  const client = await connectClient(member.daemon.url);
  started.clients.push(client);
  await callTool(client, 'pulse_should_interrupt');
  return client;
};

/** `pulse guide TEXT` on the member, as its user runs it. */
export const guideOn = (member: Member, text: string, args: string[] = []) =>
  runCli(['guide', text, '-p', member.project, ...args], { env: member.env });

/** The steers the fleet's stream holds for the test project's guidance. */
export const storedSteers = async (url: string): Promise<number> => {
  const nc = await connect({ servers: url, reconnect: false });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(FLEET_STREAM, {
      subjects_filter: projectSubjects(KEY).steer('guidance'),
    });
    return info.state.subjects?.[projectSubjects(KEY).steer('guidance')] ?? 0;
  } finally {
    await nc.close();
  }
};

/** Waits until every member holds `text` in guidance.md and has applied the same last steer; returns its id. */
export const converged = async (
  members: Member[],
  timeoutMs = 20_000,
): Promise<{ text: string; steerId: string }> =>
  waitUntil(
    () => {
      const texts = new Set(members.map(guidanceOf));
      const ids = new Set(members.map((member) => fleetStateOf(member).applied.guidance?.steerId));
      if (texts.size !== 1 || ids.size !== 1) return false;
      const [text] = texts;
      const [steerId] = ids;
      return text && steerId ? { text, steerId } : false;
    },
    {
      timeoutMs,
      describe: () =>
        `convergence: ${JSON.stringify(members.map((m) => [guidanceOf(m), fleetStateOf(m).applied.guidance?.steerId]))}`,
    },
  );

/** A nats-server and one member per origin, each following steers: the three machines the fleet tests run. */
export const startFleetOfThree = async (started: ReturnType<typeof trackStarted>) => {
  const nats = await startNats();
  const members = await Promise.all(ORIGINS.map((origin) => startMember(started, nats.url, origin)));
  await Promise.all(members.map((member) => logged(member, /fleet: following steers/)));
  return { nats, members };
};

/**
 * The fleet of three for one describe block: started before its tests and stopped after them,
 * what it started first, the nats-server last.
 */
export const useFleetOfThree = () => {
  const started = trackStarted();
  let fleet: { nats: NatsServer; members: Member[] } | undefined;
  const running = () => {
    if (fleet === undefined) throw new Error('The fleet of three has not started: use it inside a test.');
    return fleet;
  };
  beforeAll(async () => {
    fleet = await startFleetOfThree(started);
  }, 60_000);
  afterAll(async () => {
    await started.cleanUp();
    await fleet?.nats.close();
  });
  return {
    started,
    get nats() {
      return running().nats;
    },
    get members() {
      return running().members;
    },
  };
};
