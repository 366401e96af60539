import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import type {
  AnyMachineSnapshot,
  AnyStateMachine,
  AnyStateNode,
  AnyTransitionDefinition,
  InspectionEvent,
  StateValue,
} from 'xstate';
import { getStateNodes } from 'xstate/graph';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where model suites write their coverage records for the run's summary (see `model-coverage-summary.ts`). */
    modelCoverageDir: string;
  }
}

/** Where a model suite ran the machine: in the test process, or inside a real daemon. */
export type CoverageKind = 'in-process' | 'daemon';

/** One suite's coverage of one machine, as `exportCoverage` writes it for the run's summary. */
export interface CoverageRecord {
  /** The machine's short name: `replan`, `inbox`, `gate`, `poller`. */
  machine: string;
  /** The suite that ran it, e.g. `gate.model`. */
  suite: string;
  kind: CoverageKind;
  states: string[];
  transitions: string[];
  coveredStates: string[];
  coveredTransitions: string[];
  /** Why a transition this suite did not take is out of its reach, by transition. */
  reasons: Record<string, string>;
}

/** How coverage names a state node: by its key (`pending`) or by its id (`inbox.ready.idle`). */
export type StateNaming = 'key' | 'id';

/** The states and transitions of one machine, and which of them a model test has taken. */
export class MachineCoverage {
  /** Every state of the machine except its root, in document order. */
  readonly states: readonly string[];
  /** Every transition of the machine (root, `on` and `always`), in document order. */
  readonly transitions: readonly string[];
  /** The states seen so far. */
  readonly coveredStates = new Set<string>();
  /** The transitions taken so far. */
  readonly coveredTransitions = new Set<string>();
  readonly #machine: AnyStateMachine;
  readonly #naming: StateNaming;

  constructor(machine: AnyStateMachine, naming: StateNaming = 'id') {
    this.#machine = machine;
    this.#naming = naming;
    const nodes: AnyStateNode[] = [machine.root, ...getStateNodes(machine.root)];
    this.states = getStateNodes(machine.root).map((node) => this.#name(node));
    this.transitions = nodes.flatMap((node) =>
      [...node.transitions.values(), node.always ?? []]
        .flat()
        .map((definition) => this.transitionId(definition)),
    );
  }

  #name(node: AnyStateNode): string {
    return this.#naming === 'key' ? node.key : node.id;
  }

  /** Names a transition `source --event#branch--> targets`, `always` standing for eventless ones. */
  transitionId(definition: AnyTransitionDefinition): string {
    const { source } = definition;
    const eventless = definition.eventType === '';
    const branches = eventless ? (source.always ?? []) : (source.transitions.get(definition.eventType) ?? []);
    const kind = eventless ? 'always' : definition.eventType;
    const targets = definition.target?.map((target) => this.#name(target)).join(',') ?? this.#name(source);
    return `${this.#name(source)} --${kind}#${branches.indexOf(definition)}--> ${targets}`;
  }

  /** Records transitions as taken, together with their source and target states. */
  take(definitions: Iterable<AnyTransitionDefinition>): void {
    for (const definition of definitions) {
      this.coveredTransitions.add(this.transitionId(definition));
      this.coveredStates.add(this.#name(definition.source));
      for (const target of definition.target ?? []) this.coveredStates.add(this.#name(target));
    }
  }

  /** Records as seen every state (parents included) of a state value. */
  visit(value: StateValue, node: AnyStateNode = this.#machine.root): void {
    const entries: [string, StateValue | undefined][] =
      typeof value === 'string' ? [[value, undefined]] : Object.entries(value);
    for (const [key, child] of entries) {
      const state = node.states[key]!;
      this.coveredStates.add(this.#name(state));
      if (child !== undefined) this.visit(child, state);
    }
  }

  /** Records an actor's inspection event: the transitions of a microstep, the states of a snapshot. */
  inspect(event: InspectionEvent): void {
    if (event.type === '@xstate.microstep') {
      for (const definition of event._transitions) this.coveredTransitions.add(this.transitionId(definition));
    }
    if (event.type === '@xstate.microstep' || event.type === '@xstate.snapshot') {
      this.visit((event.snapshot as AnyMachineSnapshot).value);
    }
  }

  /** The states never seen, in document order. */
  missingStates(): string[] {
    return this.states.filter((state) => !this.coveredStates.has(state));
  }

  /** The transitions never taken, in document order. */
  missingTransitions(): string[] {
    return this.transitions.filter((id) => !this.coveredTransitions.has(id));
  }

  /** This suite's figures as a record for the run's summary (see `exportCoverage`). */
  record(
    machine: string,
    suite: string,
    kind: CoverageKind,
    reasons: Record<string, string> = {},
  ): CoverageRecord {
    return {
      machine,
      suite,
      kind,
      states: [...this.states],
      transitions: [...this.transitions],
      coveredStates: this.states.filter((state) => this.coveredStates.has(state)),
      coveredTransitions: this.transitions.filter((id) => this.coveredTransitions.has(id)),
      reasons,
    };
  }

  /** The printed figures, as `states 4/4, transitions 10/10`. */
  summary(): string {
    const states = this.states.length - this.missingStates().length;
    const transitions = this.transitions.length - this.missingTransitions().length;
    return `states ${states}/${this.states.length}, transitions ${transitions}/${this.transitions.length}`;
  }
}

/**
 * Writes a suite's record where the run's summary reads it (the folder the global setup provides);
 * does nothing when the suite runs without that setup.
 */
export const exportCoverage = async (record: CoverageRecord): Promise<void> => {
  const dir = inject('modelCoverageDir');
  if (dir === undefined) return;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${record.suite}--${record.machine}.json`), JSON.stringify(record));
};
