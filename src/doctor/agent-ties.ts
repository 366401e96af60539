import type { ReplanAgentStatus, SystemStatus } from '../system/system-status.js';
import { ask, type ServingDaemon } from './daemon-checks.js';
import { type Finding, holds } from './finding.js';

const WAYS: Record<NonNullable<ReplanAgentStatus['tied_by']>, string> = {
  'tool-output': "pulse's answer seen in its after-tool hook's input (PostToolUse, AfterTool)",
  'agent-argument': 'the hook session it named in a tool call',
  'hook-announced':
    "its before-tool hook announcing the very call to pulse's tool (Claude Code's tool_use_id, or the only such call in flight)",
  'only-pair': 'elimination: the only hook session and the only MCP client when one arrived',
};

/** One agent as doctor says it: which parties, how they are tied, and how a held one acknowledges. */
const agentFinding = (agent: ReplanAgentStatus): Finding => {
  const owes = agent.owes === null ? 'owes no ack' : `owes the ack of ${agent.owes}`;
  const hooks = agent.hook_sessions;
  const mcp = [...agent.mcp_sessions, ...(agent.handles ?? []), ...agent.names];
  const who = agent.label;
  if (hooks.length > 0 && mcp.length > 0)
    return holds('agent', `${who}, tied by ${WAYS[agent.tied_by!]}; ${owes}`);
  if (hooks.length > 0) {
    return holds(
      'agent',
      `${who}, tied to no MCP session yet (its hooks showed no pulse answer); ${owes}. A held call tells it to acknowledge with agent "${agent.hook_sessions[0]}", which ties it`,
    );
  }
  return holds(
    'agent',
    `${who}, with no hook session: its tool calls are not held, its answers say when to replan; ${owes}`,
  );
};

/** The agents the daemon knows in this project, a finding each; none when no daemon answers or no agent works. */
export const checkAgentTies = async (daemon: ServingDaemon | null): Promise<Finding[]> => {
  if (daemon === null) return [];
  const answer = await ask(daemon.url, 'status');
  if (answer?.status !== 200) return [];
  const agents = (JSON.parse(answer.text) as SystemStatus).replan.agents ?? [];
  return agents.map(agentFinding);
};
