#include "analysis/replay.h"
#include "util/codec.h"
