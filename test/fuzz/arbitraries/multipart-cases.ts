import fc from 'fast-check';
import type { FuzzCase, MultipartPart, MultipartSpec, Piece } from '../cases.js';
import { bodyBytes, DEFAULT_BOUNDARY } from '../materialize.js';
import { validEditForm, validTranscriptionForm } from '../routes.js';
import { FUZZ_LIMITS } from '../settings.js';

/** Field values of the edit form that are wrong in type, range or encoding. */
const oddFieldValue: fc.Arbitrary<Piece | Piece[]> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1.5',
    '129',
    ' 1',
    '1e2',
    '+1',
    '0x1',
    '99999999999999999999',
    'NaN',
    'TRUE',
    'yes',
    '1',
    'true',
    'false',
    'null',
    'auto',
    '32x32',
    '16x16',
    'jpeg',
    'url',
    'local-chat',
    'local-video',
    '\u0000',
    '\ud800',
    'é',
    'verbose_json',
    'srt',
    'word',
    'segment',
    'server_vad',
    'local-transcription',
    '{"type":"server_vad","threshold":2}',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('ff', 'c328', 'eda080', '00').map((hex): Piece => ({ hex })),
  // Past the route's 1 MiB field limit: 413.
  fc.integer({ min: 1_000, max: 1_100_000 }).map((times): Piece => ({ repeat: 'x', times })),
);

const fieldNames = [
  'model',
  'prompt',
  'n',
  'size',
  'quality',
  'output_format',
  'input_fidelity',
  'response_format',
  'stream',
  'partial_images',
  'image',
  'image[]',
  'image[0]',
  'image[x]',
  'mask',
  'user',
  'file',
  'language',
  'temperature',
  'timestamp_granularities[]',
  'include[]',
  'chunking_strategy',
  'chunking_strategy[type]',
  'chunking_strategy[threshold]',
  '__proto__',
  'constructor',
  '',
  'é',
  'a"b',
];

const oddDisposition = fc.constantFrom<string | null>(
  null,
  '',
  'form-data',
  'form-data; name=',
  'form-data; name=""',
  'form-data; name=model',
  'form-data; name="model"; name="prompt"',
  'attachment; name="model"',
  'inline',
  "form-data; name*=UTF-8''%E2%82%AC",
  'form-data; name="image"; filename=""',
  'form-data; name="image"; filename="../../etc/passwd"',
  'form-data; name="image"; filename*=UTF-8\'\'%FF%FE',
  'form-data; name="image"; filename="a.png"; filename="b.png"',
  'form-data; name="\u00e9\u0000"',
  'form-data; name="{{10000×n}}"',
);

const filePayload = fc.oneof(
  fc.constantFrom<Piece | Piece[]>(
    { fixture: 'png16' },
    { fixture: 'mask16' },
    { fixture: 'notPng' },
    { fixture: 'wav' },
    '',
    { hex: '89504e470d0a1a0a' },
    // Audio heads with nothing after them: RIFF/WAVE, Ogg, an MPEG frame sync, ID3.
    { hex: '52494646ffffffff57415645' },
    { hex: '4f67675300020000' },
    { hex: 'fffb9064' },
    { hex: '494433040000' },
  ),
  // Past the fuzz gateway's upload limit: 413.
  fc.integer({ min: 1, max: 4 }).map((extra): Piece => ({ repeat: 'A', times: FUZZ_LIMITS.uploadFileBytes + extra * 1000 })),
);

type FormChange =
  | { kind: 'drop'; index: number }
  | { kind: 'duplicate'; index: number }
  | { kind: 'value'; index: number; value: Piece | Piece[] }
  | { kind: 'disposition'; index: number; disposition: string | null }
  | { kind: 'add-field'; name: string; value: Piece | Piece[] }
  | { kind: 'add-file'; name: string; filename: string; contentType: string; value: Piece | Piece[] }
  | { kind: 'many-files'; count: number }
  | { kind: 'many-fields'; count: number };

const index = fc.nat({ max: validEditForm.length - 1 });

const formChange: fc.Arbitrary<FormChange> = fc.oneof(
  index.map((i): FormChange => ({ kind: 'drop', index: i })),
  index.map((i): FormChange => ({ kind: 'duplicate', index: i })),
  { weight: 3, arbitrary: fc.tuple(index, fc.oneof(oddFieldValue, filePayload)).map(([i, value]): FormChange => ({ kind: 'value', index: i, value })) },
  fc.tuple(index, oddDisposition).map(([i, disposition]): FormChange => ({ kind: 'disposition', index: i, disposition })),
  fc.tuple(fc.constantFrom(...fieldNames), oddFieldValue).map(([name, value]): FormChange => ({ kind: 'add-field', name, value })),
  fc
    .tuple(
      fc.constantFrom(...fieldNames),
      fc.constantFrom('x.png', '', 'a\u0000.png', '../x.png', 'é.png'),
      fc.constantFrom('image/png', 'text/plain', '', 'application/octet-stream', 'image/png; charset=x'),
      filePayload,
    )
    .map(([name, filename, contentType, value]): FormChange => ({ kind: 'add-file', name, filename, contentType, value })),
  // Past the fuzz gateway's file count limit (4): 413.
  fc.integer({ min: 2, max: 40 }).map((count): FormChange => ({ kind: 'many-files', count })),
  // Past the route's 64-field limit: 400.
  fc.integer({ min: 60, max: 400 }).map((count): FormChange => ({ kind: 'many-fields', count })),
);

/** Damage to the envelope: boundaries, content type, truncation. */
type Envelope =
  | { kind: 'intact' }
  | { kind: 'content-type'; value: string }
  | { kind: 'body-boundary'; boundary: string }
  | { kind: 'truncate'; fraction: number }
  | { kind: 'unterminated' };

const envelope: fc.Arbitrary<Envelope> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Envelope>({ kind: 'intact' }) },
  fc
    .constantFrom(
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary=other',
      'multipart/form-data; boundary="{boundary}"',
      'multipart/form-data;boundary={boundary}',
      'MULTIPART/FORM-DATA; BOUNDARY={boundary}',
      'multipart/form-data; boundary={boundary}; boundary=other',
      'multipart/form-data; charset=latin1; boundary={boundary}',
      'multipart/mixed; boundary={boundary}',
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
      '',
      'multipart/form-data; boundary={{200×b}}',
      'multipart/form-data; boundary=a b',
      'multipart/form-data; boundary=\u00e9',
    )
    .map((value): Envelope => ({ kind: 'content-type', value })),
  fc.constantFrom('', 'other', 'fuzz', 'fuzzboundaryx', '   ', 'é').map((boundary): Envelope => ({ kind: 'body-boundary', boundary })),
  fc.double({ min: 0, max: 1, noNaN: true }).map((fraction): Envelope => ({ kind: 'truncate', fraction })),
  fc.constant<Envelope>({ kind: 'unterminated' }),
);

function applyChange(parts: MultipartPart[], change: FormChange): MultipartPart[] {
  const at = (i: number) => i % Math.max(1, parts.length);
  switch (change.kind) {
    case 'drop':
      return parts.filter((_, i) => i !== at(change.index));
    case 'duplicate':
      return parts.length === 0 ? parts : [...parts, { ...parts[at(change.index)]! }];
    case 'value':
      return parts.map((part, i) => (i === at(change.index) ? { ...part, value: change.value } : part));
    case 'disposition':
      return parts.map((part, i) => (i === at(change.index) ? { ...part, disposition: change.disposition } : part));
    case 'add-field':
      return [...parts, { name: change.name, value: change.value }];
    case 'add-file':
      return [...parts, { name: change.name, filename: change.filename, contentType: change.contentType, value: change.value }];
    case 'many-files':
      return [
        ...parts,
        ...Array.from({ length: change.count }, (_, i) => ({
          name: 'image[]',
          filename: `${i}.png`,
          contentType: 'image/png',
          value: { fixture: 'png16' } as Piece,
        })),
      ];
    case 'many-fields':
      return [...Array.from({ length: change.count }, (_, i) => ({ name: `extra_${i}`, value: 'x' })), ...parts];
  }
}

function describe(change: FormChange | Envelope): string {
  const text = JSON.stringify(change);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/** The multipart routes and the valid form each starts from. */
const validForms = { edits: validEditForm, transcriptions: validTranscriptionForm } as const;

/** Cases for `/v1/images/edits` or `/v1/audio/transcriptions`: the valid form changed part by part, then its envelope damaged. */
export function multipartCases(route: keyof typeof validForms = 'edits'): fc.Arbitrary<FuzzCase> {
  return fc.tuple(fc.array(formChange, { minLength: 1, maxLength: 3 }), envelope).map(([changes, damage]): FuzzCase => {
    let parts = [...validForms[route]];
    for (const change of changes) parts = applyChange(parts, change);
    const multipart: MultipartSpec = { parts };
    const testCase: FuzzCase = { name: `${route}: ${[...changes, damage].map(describe).join('; ')}`, route, body: { multipart } };
    if (damage.kind === 'content-type') testCase.headers = { 'content-type': damage.value };
    if (damage.kind === 'body-boundary') {
      // The header keeps announcing the usual boundary; the body uses another.
      multipart.boundary = damage.boundary;
      testCase.headers = { 'content-type': `multipart/form-data; boundary=${DEFAULT_BOUNDARY}` };
    }
    if (damage.kind === 'unterminated') multipart.unterminated = true;
    if (damage.kind === 'truncate') testCase.body = { multipart, truncateAt: Math.floor(damage.fraction * bodyBytes({ multipart }).byteLength) };
    return testCase;
  });
}
