// Realm linkifiers (upstream zerver/models/linkifiers.py and the linkifier
// inline pattern of its Markdown processor): a regular expression with named
// groups and an RFC 6570 URL template whose variables are exactly those
// groups. Matches in message text become links.
//
// The patterns are written by administrators and run on every message, so
// they are compiled and matched with re2js, a port of RE2: matching takes time
// linear in the text whatever the pattern (no backtracking, hence no ReDoS),
// and RE2 rejects what it cannot run that way (backreferences, lookaround,
// huge repetition counts). Upstream validates and matches with RE2 too, so the
// accepted syntax is the same. Lengths and the number of linkifiers per realm
// are capped so that rendering a message stays bounded.
import { RE2JS } from 're2js'
import { parseTemplate } from 'url-template'

export const MAX_LINKIFIER_PATTERN_LENGTH = 1000
export const MAX_LINKIFIER_URL_TEMPLATE_LENGTH = 1000
export const MAX_LINKIFIERS_PER_REALM = 100

export interface Linkifier {
  pattern: string
  urlTemplate: string
}

/** A validation failure: the parameter it concerns and upstream's message. */
export class LinkifierProblem extends Error {
  constructor(
    readonly field: 'pattern' | 'url_template' | '__all__',
    message: string,
  ) {
    super(message)
  }
}

// ---------------------------------------------------------------- RFC 6570

const OPERATORS = new Set(['+', '#', '.', '/', ';', '?', '&'])
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/
const MODIFIER = /^(?::[1-9][0-9]{0,3}|\*)?$/

function isLiteral(ch: string): boolean {
  const cp = ch.codePointAt(0) as number
  if (cp > 0x7e) return !(cp >= 0x80 && cp <= 0x9f) && !(cp >= 0xd800 && cp <= 0xdfff)
  if (cp <= 0x20 || cp === 0x7f) return false
  return !`"'<>\\^\`{|}%`.includes(ch)
}

/** The variable names of a valid level-4 URI template, or null when it is malformed. */
export function urlTemplateVariables(template: string): string[] | null {
  const names: string[] = []
  let i = 0
  while (i < template.length) {
    const ch = template[i] as string
    if (ch === '{') {
      const end = template.indexOf('}', i + 1)
      if (end < 0) return null
      let body = template.slice(i + 1, end)
      if (body.length > 0 && OPERATORS.has(body[0] as string)) body = body.slice(1)
      if (body === '') return null
      for (const spec of body.split(',')) {
        const m = /^([^:*]*)(.*)$/.exec(spec) as RegExpExecArray
        const name = m[1] as string
        if (!VARNAME.test(name) || !MODIFIER.test(m[2] as string)) return null
        names.push(name)
      }
      i = end + 1
    } else if (ch === '%') {
      if (!/^%[0-9A-Fa-f]{2}$/.test(template.slice(i, i + 3))) return null
      i += 3
    } else {
      const cp = template.codePointAt(i) as number
      const char = String.fromCodePoint(cp)
      if (!isLiteral(char)) return null
      i += char.length
    }
  }
  return names
}

// ---------------------------------------------------------------- patterns

const BEFORE = 'linkifier_before'
const MATCH = 'linkifier_actual_match'
const AFTER = 'linkifier_after'

export interface CompiledLinkifier {
  regex: RE2JS
  groupNames: string[]
  urlTemplate: string
}

function compileOrProblem(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern)
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : 'unknown error'
    throw new LinkifierProblem('pattern', `Bad regular expression: ${detail}`)
  }
}

/**
 * Whether a URL template can only expand to an http(s) URL or a path on this
 * server: it must start, literally and case-insensitively, with `http:`,
 * `https:` or `/`, so neither a scheme such as `javascript:` nor a template
 * variable can choose the scheme. Leading whitespace and control characters
 * are skipped first, as browsers skip them when parsing a link.
 */
export function hasAllowedScheme(urlTemplate: string): boolean {
  // eslint-disable-next-line no-control-regex
  const start = urlTemplate.replace(/^[\u0000-\u0020\u007f-\u009f]+/, '')
  return /^(?:https?:|\/)/i.test(start)
}

/** Throws LinkifierProblem unless the pair is a valid linkifier (upstream's messages). */
export function validateLinkifier({ pattern, urlTemplate }: Linkifier): void {
  if (pattern.length > MAX_LINKIFIER_PATTERN_LENGTH) throw new LinkifierProblem('pattern', `pattern is too long (limit: ${MAX_LINKIFIER_PATTERN_LENGTH} characters)`)
  if (urlTemplate.length > MAX_LINKIFIER_URL_TEMPLATE_LENGTH) {
    throw new LinkifierProblem('url_template', `url_template is too long (limit: ${MAX_LINKIFIER_URL_TEMPLATE_LENGTH} characters)`)
  }
  if (pattern.trim() === '') throw new LinkifierProblem('pattern', 'This field cannot be blank.')
  if (urlTemplate.trim() === '') throw new LinkifierProblem('url_template', 'This field cannot be blank.')
  const regex = compileOrProblem(pattern)
  const groups = new Set(Object.keys(regex.namedGroups()))
  for (const reserved of [BEFORE, MATCH, AFTER]) {
    if (groups.has(reserved)) throw new LinkifierProblem('pattern', `Bad regular expression: the group name '${reserved}' is reserved`)
  }
  const variables = urlTemplateVariables(urlTemplate)
  if (variables === null || !hasAllowedScheme(urlTemplate)) throw new LinkifierProblem('url_template', 'Invalid URL template.')
  const used = new Set(variables)
  const missingInPattern = [...used].filter((v) => !groups.has(v)).sort()
  if (missingInPattern.length > 0) {
    throw new LinkifierProblem('__all__', `Group '${missingInPattern[0]}' in URL template is not present in linkifier pattern.`)
  }
  const missingInTemplate = [...groups].filter((g) => !used.has(g)).sort()
  if (missingInTemplate.length > 0) {
    throw new LinkifierProblem('__all__', `Group '${missingInTemplate[0]}' in linkifier pattern is not present in URL template.`)
  }
}

const compiled = new Map<string, RE2JS>()
const MAX_CACHED = 1000

/**
 * The pattern wrapped as upstream does: it matches only at the start of the
 * text or after whitespace or an opening delimiter, and not when a letter or
 * digit follows. Compiled once per distinct pattern (a bounded cache).
 */
export function compileLinkifier(linkifier: Linkifier): CompiledLinkifier | null {
  let regex = compiled.get(linkifier.pattern)
  if (!regex) {
    try {
      regex = RE2JS.compile(`(?P<${BEFORE}>^|\\s|['"\\(,:<])(?P<${MATCH}>${linkifier.pattern})(?P<${AFTER}>$|[^\\pL\\pN])`)
    } catch {
      return null // stored before validation tightened; never rendered
    }
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string)
    compiled.set(linkifier.pattern, regex)
  }
  const groupNames = Object.keys(regex.namedGroups()).filter((g) => g !== BEFORE && g !== MATCH && g !== AFTER)
  return { regex, groupNames, urlTemplate: linkifier.urlTemplate }
}

const SAFE_SCHEMES = new Set(['http', 'https', 'ftp', 'mailto'])

/** Upstream's sanitize_url in spirit: relative URLs and a few schemes; null for anything else (javascript:…). */
export function safeUrl(url: string): string | null {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)
  if (scheme) return SAFE_SCHEMES.has((scheme[1] as string).toLowerCase()) ? url : null
  return /^\s*[^\s]/.test(url) ? url : null
}

export type LinkifiedPiece = { text: string; href?: undefined } | { text: string; href: string }

/**
 * Splits text into plain pieces and linked pieces. Linkifiers apply in order;
 * text a linkifier has linked is not matched again by later ones.
 */
export function linkifyText(text: string, linkifiers: readonly CompiledLinkifier[]): LinkifiedPiece[] {
  let pieces: LinkifiedPiece[] = [{ text }]
  for (const linkifier of linkifiers) {
    const next: LinkifiedPiece[] = []
    for (const piece of pieces) {
      if (piece.href !== undefined) next.push(piece)
      else next.push(...applyOne(piece.text, linkifier))
    }
    pieces = next
  }
  return pieces.filter((p) => p.text !== '')
}

function applyOne(text: string, linkifier: CompiledLinkifier): LinkifiedPiece[] {
  const out: LinkifiedPiece[] = []
  const matcher = linkifier.regex.matcher(text)
  let last = 0
  let from = 0
  while (from <= text.length && matcher.find(from)) {
    const start = matcher.start(MATCH)
    const end = matcher.end(MATCH)
    // The "after" character is not consumed: it may open the next match.
    from = end > from ? end : from + 1
    if (end <= start) continue
    const values: Record<string, string> = {}
    for (const name of linkifier.groupNames) {
      const value = matcher.group(name)
      if (value !== null && value !== undefined) values[name] = value
    }
    const href = safeUrl(parseTemplate(linkifier.urlTemplate).expand(values))
    if (href === null) continue
    out.push({ text: text.slice(last, start) }, { text: text.slice(start, end), href })
    last = end
  }
  out.push({ text: text.slice(last) })
  return out
}
