// Shard 5 of 8 of the authorization matrix (matrix.ts).
import { runAuthorizationMatrix } from './matrix.js'

runAuthorizationMatrix(4, 8)
