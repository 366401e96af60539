/**
 * The status page's cards, in page order. The server writes a section for each and the browser
 * script fills it from `SystemStatus`: a new card is one line here and its renderer in
 * `client/cards.ts`, which the compiler asks for.
 */
export const CARDS = [
  { id: 'replan', title: 'Replan', wide: false },
  { id: 'delivery', title: 'Delivery to the agent', wide: false },
  { id: 'inbox', title: 'Inbox', wide: false },
  { id: 'actors', title: 'Actors', wide: false },
  { id: 'log', title: 'Event log', wide: false },
  { id: 'focus', title: 'Focus', wide: false },
  { id: 'pollers', title: 'Sources', wide: true },
  { id: 'events', title: 'Recent events', wide: true },
  { id: 'dead', title: 'Dead letters', wide: true },
] as const;

export type CardId = (typeof CARDS)[number]['id'];
