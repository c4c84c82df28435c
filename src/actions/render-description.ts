import { renderMarkdown, type RenderContext } from '../domain/markdown.js'

const EMPTY_CONTEXT: RenderContext = {
  usersByName: new Map(),
  usersById: new Map(),
  groupsByName: new Map(),
  streamsByName: new Map(),
  realmEmoji: new Map(),
}

/** Renders a channel or realm description with no mentions resolved. */
export function renderPlainDescription(markdown: string): string {
  return renderMarkdown(markdown, EMPTY_CONTEXT).html
}
