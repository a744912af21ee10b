#include "exporter/build_info.h"
