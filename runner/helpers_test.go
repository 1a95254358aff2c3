package runner

import "context"

type contextT = context.Context
