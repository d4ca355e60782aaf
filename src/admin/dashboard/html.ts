import { html as preactHtml } from 'htm/preact';

/**
 * JSX-like templates without a compile step: `html\`<p>${text}</p>\``, htm bound to Preact's `h`
 * (`htm/preact`, whose types type the default import under NodeNext, unlike `htm`'s).
 */
export const html = preactHtml;

/** What a view returns. */
export type View = ReturnType<typeof html>;
