import type { FlatProvider, ModerationCapability, Provider, TextCapability, VideoCapability } from './provider.js';

/**
 * A provider as the gateway uses it: one of the current shape is checked and returned as it is;
 * one of the older flat shape gets its methods grouped by capability (bound to it, so `this`
 * still works). Throws a `TypeError` naming the option when the object is no provider or
 * carries only part of the video calls.
 */
export function normalizeProvider(name: string, provider: Provider | FlatProvider): Provider {
  if (!provider || typeof provider !== 'object' || typeof provider.type !== 'string') {
    throw new TypeError(`options.providers.${name} must be a Provider (an object with a string \`type\`)`);
  }
  if ('version' in provider && provider.version === 2) {
    if (provider.video) checkVideo(name, provider.video.create, provider.video.get, provider.video.content);
    return provider;
  }
  const flat = provider as FlatProvider;
  const bound = <F>(method: F | undefined): F | undefined => (typeof method === 'function' ? (method.bind(flat) as F) : undefined);
  const hasVideo = checkVideo(name, flat.createVideo, flat.getVideo, flat.videoContent);
  const text = defined<TextCapability>({
    nativeProtocols: flat.nativeProtocols,
    passthrough: bound(flat.passthrough),
    stream: bound(flat.streamText),
    generate: bound(flat.generateText),
    countTokens: bound(flat.countTokens),
    storedResponse: bound(flat.storedResponse),
    compact: bound(flat.compactResponses),
  });
  const images = defined({ generate: bound(flat.generateImage), edit: bound(flat.editImage) });
  const synthesize = bound(flat.synthesizeSpeech);
  const embed = bound(flat.embed);
  const transcribe = bound(flat.transcribe);
  const moderation = defined<ModerationCapability>({ moderate: bound(flat.moderate), applyGuardrail: bound(flat.applyGuardrail) });
  const close = bound(flat.close);
  return {
    type: flat.type,
    version: 2,
    text,
    images,
    speech: synthesize ? { synthesize } : undefined,
    video: hasVideo
      ? ({ create: bound(flat.createVideo)!, get: bound(flat.getVideo)!, content: bound(flat.videoContent)! } satisfies VideoCapability)
      : undefined,
    embeddings: embed ? { embed } : undefined,
    transcriptions: transcribe ? { transcribe } : undefined,
    moderation,
    ...(close ? { close } : {}),
  };
}

/** Whether the provider has video; the three calls come together or not at all. */
function checkVideo(name: string, ...calls: unknown[]): boolean {
  const present = calls.filter((call) => typeof call === 'function').length;
  if (present !== 0 && present !== calls.length) {
    throw new TypeError(
      `options.providers.${name} has only part of the video calls: video needs create, get and content ` +
        '(createVideo, getVideo and videoContent in the flat shape) together',
    );
  }
  return present === calls.length;
}

/** The object without its undefined entries, or undefined when none is left. */
function defined<T extends object>(group: { [K in keyof T]: T[K] | undefined }): T | undefined {
  const entries = Object.entries(group).filter(([, value]) => value !== undefined);
  return entries.length ? (Object.fromEntries(entries) as T) : undefined;
}
