// Seeded randomness for the storm tests, so that a failing storm can be replayed with its seed.

/** mulberry32: a small seeded PRNG returning numbers in [0, 1). */
export const prng = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** A storm's seed, from `envVar` when set (a replay) or else random, printed with how to replay it. */
export const stormSeed = (envVar: string, storm: string): number => {
  const seed = Number(process.env[envVar] ?? Math.floor(Math.random() * 2 ** 32));
  console.log(`${storm} seed: ${seed} (replay with ${envVar}=${seed})`);
  return seed;
};
