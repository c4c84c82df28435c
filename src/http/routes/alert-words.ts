// GET, POST and DELETE /users/me/alert_words (upstream's endpoints).
import { Type } from 'typebox'
import { route } from '../route.js'
import { json } from '../params.js'
import { addAlertWords, MAX_ALERT_WORD_LENGTH, removeAlertWords } from '../../actions/alert-words.js'
import { MAX_ALERT_WORDS_PER_REQUEST } from '../../domain/limits.js'
import { fetchAlertWords } from '../../queries/alert-words.js'

const words = json(Type.Array(Type.String({ maxLength: MAX_ALERT_WORD_LENGTH }), { maxItems: MAX_ALERT_WORDS_PER_REQUEST }))

export const routes = [
  route({
    method: 'GET',
    url: '/users/me/alert_words',
    handler: async (_input, ctx) => ({ alert_words: await fetchAlertWords(ctx.prisma, ctx.user.id) }),
  }),
  route({
    method: 'POST',
    url: '/users/me/alert_words',
    params: { alert_words: words },
    handler: async (input, ctx) => ({ alert_words: await addAlertWords(ctx, input.alert_words) }),
  }),
  route({
    method: 'DELETE',
    url: '/users/me/alert_words',
    params: { alert_words: words },
    handler: async (input, ctx) => ({ alert_words: await removeAlertWords(ctx, input.alert_words) }),
  }),
]
