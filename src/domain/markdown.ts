// Message Markdown → HTML, in the dialect and HTML shapes clients expect
// (user/group/channel mentions, channel links, emoji, `codehilite` blocks).
//
// Two phases, both pure:
//   1. extractMentionCandidates(content) says which names and ids the caller
//      must look up (an overestimate: code spans are not excluded);
//   2. renderMarkdown(content, ctx) renders with the looked-up data and reports
//      who was mentioned and what the message links to.

import MarkdownIt, { type Env, type StateCore, type StateInline, type Token } from 'markdown-it'
import {
  emojiCodeForCharacters,
  emojiCodeForName,
  emojiNameForCode,
  SERVICE_EXTRA_EMOJI,
  SERVICE_EXTRA_EMOJI_URL_PREFIX,
} from './emoji.js'
import { escapeHtml } from './html-escape.js'
import { linkifyText, type CompiledLinkifier } from './linkifiers.js'
import { MAX_RENDERED_CONTENT_BYTES } from './limits.js'
import { renderedContentTooLarge } from '../errors.js'

export interface MentionableUser {
  id: number
  fullName: string
}
export interface MentionableGroup {
  id: number
  name: string
  /** System groups (level 333): mentioned only silently, shown by this name. */
  systemDisplayName?: string
}
export interface LinkableStream {
  id: number
  name: string
}
export interface RealmEmoji {
  id: string
  name: string
  /** URL of the image, e.g. `/user_avatars/2/emoji/images/7.png`. */
  sourceUrl: string
  deactivated?: boolean
}

export interface RenderContext {
  /** Lower-cased full name → active users with that name. */
  usersByName: Map<string, MentionableUser[]>
  usersById: Map<number, MentionableUser>
  /** Lower-cased group name → group. */
  groupsByName: Map<string, MentionableGroup>
  /** Lower-cased channel name → channel (only channels the sender may link). */
  streamsByName: Map<string, LinkableStream>
  /**
   * topicWithKey(channel, topic) → the first message of the topic the sender
   * may read: a topic link names it with `/with/` so that it follows the
   * topic when it moves (upstream level 347). No entry: a plain topic link.
   */
  topicWith?: Map<string, number>
  /** Emoji name → custom emoji of the realm. */
  realmEmoji: Map<string, RealmEmoji>
  /** e.g. `https://chat.example.com`; links to it become relative. */
  realmUrl?: string
  /** The realm's linkifiers, in their order (domain/linkifiers.ts). */
  linkifiers?: readonly CompiledLinkifier[]
}

export interface RenderResult {
  html: string
  /** Users mentioned directly and not silently (sorted). */
  mentionedUserIds: number[]
  /** Users mentioned only with the silent `@_**…**` syntax (sorted). */
  silentlyMentionedUserIds: number[]
  /** Groups mentioned, not silently (sorted). */
  mentionedGroupIds: number[]
  streamWildcard: boolean
  topicWildcard: boolean
  hasLink: boolean
  hasImage: boolean
  hasAttachment: boolean
  /** Path ids (the part after `/user_uploads/`) of linked uploads, in order, unique. */
  linkedUploadPaths: string[]
}

export interface MentionCandidates {
  userNames: string[]
  userIds: number[]
  groupNames: string[]
  streamNames: string[]
  emojiNames: string[]
}

export const STREAM_WILDCARDS = ['all', 'everyone', 'stream', 'channel'] as const
export const TOPIC_WILDCARDS = ['topic'] as const
/** Shown for the empty topic name in channel-topic links. */
export const EMPTY_TOPIC_FALLBACK_NAME = 'general chat'
export const IMAGE_EXTENSIONS = ['bmp', 'gif', 'jpe', 'jpeg', 'jpg', 'png', 'webp'] as const
export const LINK_ATTRIBUTES = { target: '_blank', rel: 'noopener noreferrer' } as const

const isStreamWildcard = (s: string): boolean => (STREAM_WILDCARDS as readonly string[]).includes(s)
const isTopicWildcard = (s: string): boolean => (TOPIC_WILDCARDS as readonly string[]).includes(s)

/**
 * False when rendering `content` cannot set `topicWildcard` (no `@**topic**` in
 * it), so the topic's participants need not be loaded. True may still render
 * no wildcard (code spans, quotes of a silent one…).
 */
export function mayMentionTopicWildcard(content: string): boolean {
  return TOPIC_WILDCARDS.some((w) => content.includes(`@**${w}**`))
}

// A mention or channel link may only follow these characters (or the start).
const MAY_PRECEDE = /[\s'"(,:<]/
const USER_MENTION = /^@(_?)\*\*([^*]+)\*\*/
const GROUP_MENTION = /^@(_?)\*([^*]+)\*/
const STREAM_LINK = /^#\*\*([^*]+)\*\*/
const EMOJI = /^:([\w\-+]+):/
const NAME_WITH_ID = /^(.+)?\|(\d+)$/

// ---------------------------------------------------------------------------
// Phase 1

export function extractMentionCandidates(content: string): MentionCandidates {
  const userNames = new Set<string>()
  const userIds = new Set<number>()
  const groupNames = new Set<string>()
  const streamNames = new Set<string>()
  const emojiNames = new Set<string>()
  for (const m of content.matchAll(/(?<![^\s'"(,:<])@_?\*\*([^*]+)\*\*/g)) {
    const text = m[1]
    if (isStreamWildcard(text) || isTopicWildcard(text)) continue
    const withId = NAME_WITH_ID.exec(text)
    if (withId) {
      userIds.add(Number(withId[2]))
      if (withId[1]) userNames.add(withId[1])
    } else userNames.add(text)
  }
  for (const m of content.matchAll(/(?<![^\s'"(,:<])@_?\*([^*]+)\*/g)) groupNames.add(m[1])
  for (const m of content.matchAll(/(?<![^\s'"(,:<])#\*\*([^*]+)\*\*/g)) {
    const text = m[1]
    const gt = text.indexOf('>')
    if (gt > 0) streamNames.add(text.slice(0, gt))
    streamNames.add(text)
  }
  for (const m of content.matchAll(/:([\w\-+]+):/g)) emojiNames.add(m[1])
  return {
    userNames: [...userNames],
    userIds: [...userIds],
    groupNames: [...groupNames],
    streamNames: [...streamNames],
    emojiNames: [...emojiNames],
  }
}

// ---------------------------------------------------------------------------
// Phase 2

interface Collected {
  mentioned: Set<number>
  silentlyMentioned: Set<number>
  groups: Set<number>
  streamWildcard: boolean
  topicWildcard: boolean
  hrefs: string[]
}
interface RenderEnv extends Env {
  ctx: RenderContext
  collected: Collected
}

const envOf = (env: unknown): RenderEnv => env as RenderEnv

/** Python's `quote(s, safe="")`, then `.`→`%2E`, then `%`→`.` (narrow-URL encoding). */
export function hashEncode(s: string): string {
  const quoted = Array.from(new TextEncoder().encode(s))
    .map((b) => {
      const c = String.fromCharCode(b)
      return /[A-Za-z0-9_.\-~]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0')
    })
    .join('')
  return quoted.replace(/\./g, '%2E').replace(/%/g, '.')
}

export function streamNarrowSlug(stream: LinkableStream): string {
  return `${stream.id}-${hashEncode(stream.name.replace(/ /g, '-'))}`
}

function findUser(text: string, ctx: RenderContext): MentionableUser | undefined {
  const withId = NAME_WITH_ID.exec(text)
  if (withId) {
    const user = ctx.usersById.get(Number(withId[2]))
    // @**name|id** must name the user with that id.
    if (withId[1] && user && user.fullName !== withId[1]) return undefined
    return user
  }
  const sameName = ctx.usersByName.get(text.toLowerCase())
  if (!sameName || sameName.length === 0) return undefined
  return [...sameName].sort((a, b) => a.id - b.id)[0]
}

function mayStartHere(state: StateInline): boolean {
  return state.pos === 0 || MAY_PRECEDE.test(state.src[state.pos - 1])
}

function emit(state: StateInline, html: string, length: number): void {
  const token = state.push('html_inline', '', 0)
  token.content = html
  state.pos += length
}

function userOrGroupMention(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */ || !mayStartHere(state)) return false
  const env = envOf(state.env)
  const rest = state.src.slice(state.pos)

  const user = USER_MENTION.exec(rest)
  if (user) {
    const isSilent = user[1] === '_'
    const text = user[2]
    let html: string
    const c = env.collected
    if (isStreamWildcard(text)) {
      const cls = 'user-mention channel-wildcard-mention' + (isSilent ? ' silent' : '')
      html = `<span class="${cls}" data-user-id="*">${isSilent ? '' : '@'}${escapeHtml(text)}</span>`
      if (!silent && !isSilent) c.streamWildcard = true
    } else if (isTopicWildcard(text)) {
      const cls = 'topic-mention' + (isSilent ? ' silent' : '')
      html = `<span class="${cls}">${isSilent ? '' : '@'}${escapeHtml(text)}</span>`
      if (!silent && !isSilent) c.topicWildcard = true
    } else {
      const found = findUser(text, env.ctx)
      if (!found) return false
      const cls = 'user-mention' + (isSilent ? ' silent' : '')
      html = `<span class="${cls}" data-user-id="${found.id}">${isSilent ? '' : '@'}${escapeHtml(found.fullName)}</span>`
      if (!silent) (isSilent ? c.silentlyMentioned : c.mentioned).add(found.id)
    }
    if (!silent) emit(state, html, user[0].length)
    else state.pos += user[0].length
    return true
  }

  const group = GROUP_MENTION.exec(rest)
  if (group) {
    const isSilent = group[1] === '_'
    const found = env.ctx.groupsByName.get(group[2].toLowerCase())
    if (!found || (found.systemDisplayName !== undefined && !isSilent)) return false
    const cls = 'user-group-mention' + (isSilent ? ' silent' : '')
    const html = `<span class="${cls}" data-user-group-id="${found.id}">${isSilent ? '' : '@'}${escapeHtml(found.systemDisplayName ?? found.name)}</span>`
    if (!silent) {
      if (!isSilent) env.collected.groups.add(found.id)
      emit(state, html, group[0].length)
    } else state.pos += group[0].length
    return true
  }
  return false
}

function channelLink(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !mayStartHere(state)) return false
  const m = STREAM_LINK.exec(state.src.slice(state.pos))
  if (!m) return false
  const env = envOf(state.env)
  const text = m[1]
  const html = channelTopicLink(text, env.ctx) ?? channelOnlyLink(text, env.ctx)
  if (html === undefined) return false
  if (!silent) emit(state, html, m[0].length)
  else state.pos += m[0].length
  return true
}

function channelOnlyLink(name: string, ctx: RenderContext): string | undefined {
  const stream = ctx.streamsByName.get(name.toLowerCase())
  if (!stream) return undefined
  return (
    `<a class="stream" data-stream-id="${stream.id}" href="/#narrow/channel/${streamNarrowSlug(stream)}">` +
    `#${escapeHtml(stream.name)}</a>`
  )
}

/** The key of RenderContext.topicWith: topics compare without case. */
export const topicWithKey = (streamId: number, topic: string): string => `${streamId}\n${topic.toLowerCase()}`

/** The channel and topic names of the `#**channel>topic**` links of a content (not message links, `…@id`). */
export function topicLinkCandidates(streamNames: readonly string[]): { streamName: string; topic: string }[] {
  return streamNames.flatMap((text) => {
    const gt = text.indexOf('>')
    if (gt <= 0 || /@\d+$/.test(text)) return []
    return [{ streamName: text.slice(0, gt), topic: text.slice(gt + 1) }]
  })
}

function channelTopicLink(text: string, ctx: RenderContext): string | undefined {
  const gt = text.indexOf('>')
  if (gt <= 0) return undefined
  const stream = ctx.streamsByName.get(text.slice(0, gt).toLowerCase())
  if (!stream) return undefined
  let topic = text.slice(gt + 1)
  // #**channel>topic@123** links to a message.
  const near = /^(.*)@(\d+)$/.exec(topic)
  if (near) topic = near[1]
  const base = `/#narrow/channel/${streamNarrowSlug(stream)}/topic/${hashEncode(topic)}`
  const shownTopic = topic === '' ? `<em>${EMPTY_TOPIC_FALLBACK_NAME}</em>` : escapeHtml(topic)
  if (near) {
    return `<a class="message-link" href="${base}/near/${near[2]}">#${escapeHtml(stream.name)} &gt; ${shownTopic} @ 💬</a>`
  }
  const withId = ctx.topicWith?.get(topicWithKey(stream.id, topic))
  const href = withId === undefined ? base : `${base}/with/${withId}`
  return `<a class="stream-topic" data-stream-id="${stream.id}" href="${href}">#${escapeHtml(stream.name)} &gt; ${shownTopic}</a>`
}

export function unicodeEmojiHtml(code: string, name: string): string {
  const title = escapeHtml(name.replace(/_/g, ' '))
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${escapeHtml(name)}:</span>`
}

function imageEmojiHtml(src: string, name: string): string {
  return `<img alt=":${escapeHtml(name)}:" class="emoji" src="${escapeHtml(src)}" title="${escapeHtml(name.replace(/_/g, ' '))}">`
}

function emojiHtml(name: string, ctx: RenderContext): string | undefined {
  const realm = ctx.realmEmoji.get(name)
  if (realm && !realm.deactivated) return imageEmojiHtml(realm.sourceUrl, name)
  const code = emojiCodeForName(name)
  if (code !== undefined) return unicodeEmojiHtml(code, name)
  const extra = SERVICE_EXTRA_EMOJI.get(name)
  if (extra) return imageEmojiHtml(`${SERVICE_EXTRA_EMOJI_URL_PREFIX}${extra.code}.png`, name)
  return undefined
}

function emojiName(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false
  const m = EMOJI.exec(state.src.slice(state.pos))
  if (!m) return false
  const html = emojiHtml(m[1], envOf(state.env).ctx)
  if (html === undefined) return false
  if (!silent) emit(state, html, m[0].length)
  else state.pos += m[0].length
  return true
}

const UNICODE_EMOJI =
  /\p{Regional_Indicator}\p{Regional_Indicator}|[#*0-9]\uFE0F?\u20E3|\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?)*/gu

/**
 * Realm linkifiers on plain text outside links and code: each match becomes
 * `<a href="…">match</a>` as upstream renders it.
 */
function realmLinkifiers(state: StateCore): void {
  const { ctx, collected } = envOf(state.env)
  const linkifiers = ctx.linkifiers ?? []
  if (linkifiers.length === 0) return
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue
    const out: Token[] = []
    let linkDepth = 0
    for (const tok of block.children) {
      if (tok.type === 'link_open') linkDepth++
      else if (tok.type === 'link_close') linkDepth--
      if (tok.type !== 'text' || linkDepth > 0 || tok.content === '') {
        out.push(tok)
        continue
      }
      for (const piece of linkifyText(tok.content, linkifiers)) {
        if (piece.href === undefined) {
          out.push(textToken(state, piece.text))
          continue
        }
        const href = relativeHref(piece.href, ctx)
        collected.hrefs.push(href)
        const open = new state.Token('html_inline', '', 0)
        open.content = `<a href="${escapeHtml(href)}">`
        const close = new state.Token('html_inline', '', 0)
        close.content = '</a>'
        out.push(open, textToken(state, piece.text), close)
      }
    }
    block.children = out
  }
}

/** Literal emoji characters in text become emoji spans, as if typed by name. */
function unicodeEmoji(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue
    const out: Token[] = []
    for (const tok of block.children) {
      if (tok.type !== 'text' || !UNICODE_EMOJI.test(tok.content)) {
        out.push(tok)
        continue
      }
      UNICODE_EMOJI.lastIndex = 0
      let last = 0
      for (const m of tok.content.matchAll(UNICODE_EMOJI)) {
        const code = emojiCodeForCharacters(m[0]) ?? emojiCodeForCharacters(m[0].replace(/\uFE0F/g, ''))
        const name = code === undefined ? undefined : emojiNameForCode(code)
        if (code === undefined || name === undefined) continue
        const start = m.index
        if (start > last) out.push(textToken(state, tok.content.slice(last, start)))
        const html = new state.Token('html_inline', '', 0)
        html.content = unicodeEmojiHtml(code, name)
        out.push(html)
        last = start + m[0].length
      }
      if (last < tok.content.length) out.push(textToken(state, tok.content.slice(last)))
    }
    block.children = out
  }
}

function textToken(state: StateCore, content: string): Token {
  const t = new state.Token('text', '', 0)
  t.content = content
  return t
}

function codeBlockHtml(content: string, lang: string): string {
  const body = content
    .split('\n')
    .map((line) => line.replace(/\s+$/, ''))
    .join('\n')
  const code = escapeHtml(body.endsWith('\n') ? body : body + '\n')
  const langAttr = lang ? ` data-code-language="${escapeHtml(lang)}"` : ''
  return `<div class="codehilite"${langAttr}><pre><span></span><code>${code}</code></pre></div>\n`
}

function createRenderer() {
  const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false })
  md.linkify.set({ fuzzyEmail: false })
  // Reference-style links and image syntax are not part of the dialect.
  md.disable(['reference', 'image'])

  md.inline.ruler.before('emphasis', 'roost_mention', userOrGroupMention)
  md.inline.ruler.before('emphasis', 'roost_channel_link', channelLink)
  md.inline.ruler.after('linkify', 'roost_emoji', emojiName)
  md.core.ruler.push('roost_unicode_emoji', unicodeEmoji)
  md.core.ruler.before('roost_unicode_emoji', 'roost_linkifiers', realmLinkifiers)

  md.renderer.rules.fence = (tokens, idx, _options, env) => {
    const token = tokens[idx]
    const lang = token.info.trim().split(/\s+/)[0] ?? ''
    if (lang === 'quote') return `<blockquote>\n${renderInner(token.content, envOf(env))}</blockquote>\n`
    return codeBlockHtml(token.content, lang)
  }
  md.renderer.rules.code_block = (tokens, idx) => codeBlockHtml(tokens[idx].content, '')
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx]
    const { ctx, collected } = envOf(env)
    const href = relativeHref(String(token.attrGet('href') ?? ''), ctx)
    token.attrSet('href', href)
    collected.hrefs.push(href)
    token.attrSet('target', LINK_ATTRIBUTES.target)
    token.attrSet('rel', LINK_ATTRIBUTES.rel)
    return self.renderToken(tokens, idx, options)
  }
  return md
}

const md = createRenderer()

function renderInner(content: string, env: RenderEnv): string {
  return md.renderer.render(md.parse(content, env), md.options, env)
}

function relativeHref(href: string, ctx: RenderContext): string {
  if (!ctx.realmUrl) return href
  const base = ctx.realmUrl.replace(/\/+$/, '')
  if (href === base || href.startsWith(base + '/')) return href.slice(base.length) || '/'
  return href
}

function pathOf(href: string): string {
  return href.replace(/[?#].*$/, '')
}

export function renderMarkdown(content: string, ctx: RenderContext): RenderResult {
  const collected: Collected = {
    mentioned: new Set(),
    silentlyMentioned: new Set(),
    groups: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    hrefs: [],
  }
  const env: RenderEnv = { ctx, collected }
  // Rendering collects mentions and link targets, also from nested quote blocks.
  const html = renderInner(content, env).replace(/\n+$/, '')
  if (Buffer.byteLength(html, 'utf8') > MAX_RENDERED_CONTENT_BYTES) throw renderedContentTooLarge(MAX_RENDERED_CONTENT_BYTES)

  let hasImage = false
  const uploads: string[] = []
  for (const href of collected.hrefs) {
    const path = pathOf(href)
    const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase()
    if (ext !== undefined && (IMAGE_EXTENSIONS as readonly string[]).includes(ext)) hasImage = true
    if (path.startsWith('/user_uploads/')) {
      const pathId = path.slice('/user_uploads/'.length)
      if (pathId && !uploads.includes(pathId)) uploads.push(pathId)
    }
  }
  const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => a - b)
  for (const id of collected.mentioned) collected.silentlyMentioned.delete(id)
  return {
    html,
    mentionedUserIds: sorted(collected.mentioned),
    silentlyMentionedUserIds: sorted(collected.silentlyMentioned),
    mentionedGroupIds: sorted(collected.groups),
    streamWildcard: collected.streamWildcard,
    topicWildcard: collected.topicWildcard,
    hasLink: collected.hrefs.length > 0,
    hasImage,
    hasAttachment: uploads.length > 0,
    linkedUploadPaths: uploads,
  }
}
