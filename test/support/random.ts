// Seeded randomness for the storm tests, so that a failing storm can be replayed with its seed.

/** A storm's seed, from `envVar` when set (a replay) or else random, printed with how to replay it. */
export const stormSeed = (envVar: string, storm: string): number => {
  const seed = Number(process.env[envVar] ?? Math.floor(Math.random() * 2 ** 32));
  console.log(`${storm} seed: ${seed} (replay with ${envVar}=${seed})`);
  return seed;
};
