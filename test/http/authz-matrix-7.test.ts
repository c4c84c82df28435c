// Shard 7 of 8 of the authorization matrix (authz-matrix.ts).
import { runAuthorizationMatrix } from './authz-matrix.js'

runAuthorizationMatrix(6, 8)
