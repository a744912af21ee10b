#include "exporter/core/build_info.h"
