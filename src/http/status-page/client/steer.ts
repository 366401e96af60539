// The steer card's forms: each writes guidance.md or constraints.md through `POST steer`, with the
// token this page was served with (a page of another origin cannot read it), and says what pulse
// answered: the event logged and who must now replan, or why nothing was written.

interface SteerAnswer {
  event_id: string | null;
  owing: { label: string }[];
  note: string;
}

const token = document.querySelector<HTMLMetaElement>('meta[name="pulse-steer-token"]')?.content ?? '';

const headers = (json: boolean): Record<string, string> => ({
  'x-pulse-steer-token': token,
  ...(json ? { 'content-type': 'application/json' } : {}),
});

/** The error a refused request names, else its status. */
const refusal = async (response: Response): Promise<string> => {
  const body = (await response.json().catch(() => null)) as { error?: unknown } | null;
  return typeof body?.error === 'string' ? body.error : `pulse answered ${response.status}.`;
};

const say = (form: HTMLFormElement, text: string, state: 'ok' | 'bad' | 'busy') => {
  const result = form.querySelector<HTMLElement>('.steer-result')!;
  result.dataset.state = state;
  result.textContent = text;
};

/** The answer to a write, in a sentence or two. */
const answered = (answer: SteerAnswer): string =>
  answer.event_id === null || answer.owing.length === 0
    ? answer.note
    : `Saved as ${answer.event_id}. Held until each acknowledges: ${answer.owing.map((agent) => agent.label).join('; ')}.`;

const save = async (form: HTMLFormElement) => {
  const data = new FormData(form);
  const text = String(data.get('text') ?? '');
  say(form, 'Saving…', 'busy');
  try {
    const response = await fetch('steer', {
      method: 'POST',
      headers: headers(true),
      body: JSON.stringify({ file: form.dataset.file, text, mode: String(data.get('mode') ?? 'replace') }),
    });
    if (!response.ok) return say(form, await refusal(response), 'bad');
    say(form, answered((await response.json()) as SteerAnswer), 'ok');
  } catch {
    say(form, 'The daemon did not answer: is pulse still running?', 'bad');
  }
};

/**
 * Fills the editor with the file as it is now. On page load (`onOpen`) a box the user has typed
 * in meanwhile is left as it is: their words are never replaced by a late answer.
 */
const load = async (form: HTMLFormElement, { onOpen = false } = {}) => {
  const box = form.querySelector<HTMLTextAreaElement>('textarea')!;
  const before = box.value;
  try {
    const response = await fetch(`steer?file=${encodeURIComponent(form.dataset.file ?? '')}`, {
      headers: headers(false),
    });
    if (!response.ok) return say(form, await refusal(response), 'bad');
    const { text } = (await response.json()) as { text: string };
    if (onOpen && box.value !== before)
      return say(
        form,
        `Kept what you typed; "Load the current text" shows .pulse/${form.dataset.file}.md.`,
        'ok',
      );
    box.value = text;
    const replace = form.querySelector<HTMLInputElement>('input[value="replace"]');
    if (replace) replace.checked = true;
    say(form, `Loaded .pulse/${form.dataset.file}.md as it is now: edit it and save to replace it.`, 'ok');
  } catch {
    say(form, 'The daemon did not answer: is pulse still running?', 'bad');
  }
};

/** Enables the forms (they stay disabled, and say why, without the script) and shows each file's current text. */
export const setUpSteering = (): void => {
  for (const form of document.querySelectorAll<HTMLFormElement>('form.steer')) {
    form.querySelector('fieldset')!.disabled = false;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void save(form);
    });
    form.querySelector('button.load')!.addEventListener('click', () => void load(form));
    void load(form, { onOpen: true });
  }
  document.getElementById('steer-needs-script')?.setAttribute('hidden', '');
};
