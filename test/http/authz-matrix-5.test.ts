// Shard 5 of 8 of the authorization matrix (authz-matrix.ts).
import { runAuthorizationMatrix } from './authz-matrix.js'

runAuthorizationMatrix(4, 8)
