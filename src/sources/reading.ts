import type { SourceConfig } from './config.js';
import type { ItemReading } from './extract.js';
import { ruleFields } from './rule-config.js';

/** How a source's answers are read: its `map`, and the paths its rules test, kept with each item. */
export const readingOf = (source: Pick<SourceConfig, 'map' | 'rules'> | undefined): ItemReading =>
  source === undefined ? {} : { map: source.map, fields: ruleFields(source.rules) };
