/**
 * The options of a publish, read and checked in the order ntfy's `parsePublishParams` checks them,
 * so a request with several problems gets the error ntfy would give first. Every publishing
 * header and query parameter ntfy documents is read here, and each either does what ntfy does or
 * is refused with ntfy's error (the table in `docs/ntfy.md`):
 *
 * | option (aliases) | here |
 * |---|---|
 * | `X-Cache` (`Cache`) | `no` stores nothing: live subscribers only |
 * | `X-Firebase` (`Firebase`) | accepted and ignored: there is no Firebase relay here |
 * | `X-Title` (`Title`, `ti`, `t`), `X-Message` (`Message`, `m`), `X-Priority` (…), `X-Tags` (…) | as ntfy; title ≤ 1 KB (40057), tags ≤ 512 bytes (40058) |
 * | `X-Click` (`Click`) | as ntfy |
 * | `X-Icon` (`Icon`) | `http(s)://` only (40021) |
 * | `X-Attach` (`Attach`, `a`), `X-Filename` (`Filename`, `file`, `f`) | attachment by URL (40013); a file upload is 40014 |
 * | `X-Email` (…), `X-Call` (`Call`) | 40001, 40032: e-mail and calls are not enabled here |
 * | `X-Delay` (`Delay`, `X-At`, `At`, `X-In`, `In`), `X-Timezone` (`Timezone`) | scheduled delivery (40002, 40004–40006) |
 * | `X-Actions` (`Actions`, `Action`) | action buttons (40018) |
 * | `X-Markdown` (`Markdown`, `md`), `Content-Type: text/markdown` | as ntfy |
 * | `X-UnifiedPush` (`UnifiedPush`, `up`), `Content-Encoding: aes128gcm` | as ntfy |
 * | `X-Poll-ID` (`Poll-ID`) | a `poll_request` event, live only, as ntfy |
 * | `X-Template` (`Template`, `tpl`), `X-Sequence-ID` (`Sequence-ID`, `SID`) | refused: 40000 |
 */
import { actionsFromJson, parseActions } from './actions.ts';
import { deliveryTime, type DelayBounds } from './delay.ts';
import { NtfyError } from './errors.ts';
import {
  parsePriority,
  parseTags,
  readBoolParam,
  readBoolParamOr,
  readParam,
  type ParamSource,
  type PublishOptions,
} from './publish-params.ts';

/** ntfy's title limit (`message-title-size-limit`, 1 KB): a title is a line, not a letter. */
export const TITLE_SIZE_LIMIT_BYTES = 1024;
/** ntfy's limit on all tags of a message together (`message-tags-size-limit`). */
export const TAGS_SIZE_LIMIT_BYTES = 512;

/** What reading options needs besides the request: the store clock's now and the delay bounds. */
export interface PublishContext {
  nowMs: number;
  delay: DelayBounds;
}

const URL_PATTERN = /^https?:\/\//;

/**
 * The file name an attachment URL gives (Go's `path.Base` of its path), `attachment` when it
 * gives none, as ntfy names it.
 */
export function attachmentName(url: string): string {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return 'attachment';
  }
  const trimmed = path.replace(/\/+$/, '');
  const base = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  return base === '' || base === '.' ? 'attachment' : base;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** A value given and not a false boolean: templating and sequence ids are on. */
function switchedOn(value: string | undefined): boolean {
  return value !== undefined && !['0', 'no', 'false'].includes(value.toLowerCase());
}

/**
 * The publish options of a request. `json` holds fields of a JSON publish that have no header
 * form of their own here (its `actions` array), read in the same place as their header.
 */
export function readPublishOptions(source: ParamSource, context: PublishContext, json: { actions?: unknown } = {}): PublishOptions {
  const options: PublishOptions = {
    markdown:
      readBoolParam(source, 'x-markdown', 'markdown', 'md') ||
      (source.header('content-type') ?? '').toLowerCase().startsWith('text/markdown'),
    unifiedPush: false,
    cache: readBoolParamOr(source, true, 'x-cache', 'cache'),
  };
  // `X-Firebase` is read by ntfy here; with no Firebase relay it changes nothing.
  const title = readParam(source, 'x-title', 'title', 'ti', 't');
  if (title !== undefined) options.title = title;
  const click = readParam(source, 'x-click', 'click');
  if (click !== undefined) options.click = click;
  const icon = readParam(source, 'x-icon', 'icon');
  const filename = readParam(source, 'x-filename', 'filename', 'file', 'f');
  const attach = readParam(source, 'x-attach', 'attach', 'a');
  if (attach !== undefined) {
    if (!URL_PATTERN.test(attach)) throw new NtfyError('ATTACHMENT_URL_INVALID');
    options.attachment = { name: filename ?? attachmentName(attach), url: attach };
  } else if (filename !== undefined) options.filename = filename;
  if (icon !== undefined) {
    if (!URL_PATTERN.test(icon)) throw new NtfyError('ICON_URL_INVALID');
    options.icon = icon;
  }
  if (readParam(source, 'x-email', 'x-e-mail', 'email', 'e-mail', 'mail', 'e') !== undefined) throw new NtfyError('EMAIL_DISABLED');
  if (readParam(source, 'x-call', 'call') !== undefined) throw new NtfyError('CALLS_DISABLED');
  const message = readParam(source, 'x-message', 'message', 'm');
  if (message !== undefined) options.message = message.replace(/\\n/g, '\n');
  const priority = parsePriority(readParam(source, 'x-priority', 'priority', 'prio', 'p'));
  if (priority !== undefined) options.priority = priority;
  const tags = parseTags(readParam(source, 'x-tags', 'tags', 'tag', 'ta'));
  if (tags !== undefined) options.tags = tags;
  if (title !== undefined && byteLength(title) > TITLE_SIZE_LIMIT_BYTES)
    throw new NtfyError('TITLE_TOO_LARGE', `more than ${TITLE_SIZE_LIMIT_BYTES} bytes`);
  if (tags !== undefined && tags.reduce((sum, tag) => sum + byteLength(tag), 0) > TAGS_SIZE_LIMIT_BYTES)
    throw new NtfyError('TAGS_TOO_LARGE', `more than ${TAGS_SIZE_LIMIT_BYTES} bytes together`);
  const delay = readParam(source, 'x-delay', 'delay', 'x-at', 'at', 'x-in', 'in');
  if (delay !== undefined) {
    if (!options.cache) throw new NtfyError('DELAY_NO_CACHE');
    options.deliverAtMs = deliveryTime(delay, readParam(source, 'x-timezone', 'timezone'), context.nowMs, context.delay);
  }
  if (json.actions !== undefined && json.actions !== null) {
    const actions = actionsFromJson(json.actions);
    if (actions.length > 0) options.actions = actions;
  } else {
    const actions = readParam(source, 'x-actions', 'actions', 'action');
    if (actions !== undefined) options.actions = parseActions(actions);
  }
  options.unifiedPush =
    readBoolParam(source, 'x-unifiedpush', 'unifiedpush', 'up') ||
    (source.header('content-encoding') ?? '').trim().toLowerCase() === 'aes128gcm';
  const pollId = readParam(source, 'x-poll-id', 'poll-id');
  if (pollId !== undefined) {
    // ntfy's poll request: never stored, never UnifiedPush, sent now.
    options.pollId = pollId;
    options.unifiedPush = false;
    options.cache = false;
    delete options.deliverAtMs;
  }
  if (switchedOn(readParam(source, 'x-template', 'template', 'tpl')))
    throw new NtfyError('NOT_SUPPORTED', 'message templating is not supported by this server');
  if (readParam(source, 'x-sequence-id', 'sequence-id', 'sid') !== undefined)
    throw new NtfyError('NOT_SUPPORTED', 'sequence IDs (updating and deleting notifications) are not supported by this server');
  return options;
}
