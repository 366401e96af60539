import type { SourceConfig } from '../config/config.js';
import { ruleFields } from '../config/rule-config.js';
import type { ItemReading } from './extract.js';

/** How a source's answers are read: its `map`, and the paths its rules test, kept with each item. */
export const readingOf = (source: Pick<SourceConfig, 'map' | 'rules'> | undefined): ItemReading =>
  source === undefined ? {} : { map: source.map, fields: ruleFields(source.rules) };
