import { describe, expect, it } from 'vitest';
import { createActor, createMachine, setup } from 'xstate';
import { actorOf, lookUp, PulseUnavailableError } from '../../src/system/actors.js';

/** A parent that registers stubs by system id, as xstate's own system tests do. */
const parentMachine = setup({
  actors: { steerStub: createMachine({ id: 'steer' }), gateStub: createMachine({ id: 'gate' }) },
}).createMachine({
  invoke: [
    { src: 'steerStub', systemId: 'steer' },
    { src: 'gateStub', systemId: 'gate' },
  ],
});

describe('looking an actor up by system id', () => {
  it('finds the actor registered under the id, and none under an unknown poller id', () => {
    const root = createActor(parentMachine).start();
    expect(lookUp(root.system, 'steer')).toBeDefined();
    expect(actorOf(root, 'gate')).toBe(lookUp(root.system, 'gate'));
    expect(actorOf(root, 'gate')).not.toBe(actorOf(root, 'steer'));
    expect(lookUp(root.system, 'poller:nobody')).toBeUndefined();
    root.stop();
  });

  it('refuses with a sentence naming the actor once the system has stopped', () => {
    const root = createActor(parentMachine).start();
    root.stop();
    expect(() => actorOf(root, 'gate')).toThrow(PulseUnavailableError);
    expect(() => actorOf(root, 'gate')).toThrow('The gate actor is not running');
  });
});
