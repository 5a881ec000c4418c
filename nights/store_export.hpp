// What a store says in other forms: `flce store list` (one line per finding with its history) and
// `flce store export` (the pins it implies, in corpus/expectations.json's format: each open
// finding's case expects its outcome on the torch it was last seen on; a fixed one expects pass).
#pragma once
#include <string>

#include "nights/store.hpp"

namespace flce {

std::string store_list_text(const Store& store);
nlohmann::ordered_json store_list_json(const Store& store);

// Writes FILE and its cases beside it (cases/store-<id>.json, canonical case JSON); returns the
// number of pins. Throws std::runtime_error naming a path that cannot be written.
int export_pins(const Store& store, const std::string& file);

}  // namespace flce
