// StrategyOptionSet: the options that belong to one strategy or one family
// of strategies, each a struct declared beside them (AsyncPsOptions in
// worker/strategies/ps/async_ps_options.h, GradientBucketOptions in
// worker/strategies/allreduce/bucket_options.h, ...), carried by
// SyncOptions without SyncOptions knowing their types.
//
//   options.strategy.Set(AsyncPsOptions{...});     // a test, a launcher
//   options.strategy.Get<AsyncPsOptions>().staleness  // the strategy
//
// Get<T>() returns the T that was Set, or T{} (the struct's defaults, which
// are also its flags' defaults) when none was. A T with a member
// `absl::Status Validate() const` is checked by Validate().
//
// Flags: an options struct's flags are defined once, in its own .cc, which
// registers a reader with RINGSIDE_REGISTER_OPTION_FLAGS; ReadOptionFlags
// runs every reader linked into the binary (the worker's
// SyncOptionsFromFlags). Binaries that only share the knob (predict, the
// benchmarks) link the same options library and call its FromFlags.
#ifndef RINGSIDE_WORKER_STRATEGY_OPTION_SET_H_
#define RINGSIDE_WORKER_STRATEGY_OPTION_SET_H_

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

class StrategyOptionSet {
 public:
  template <typename T>
  void Set(T value) {
    auto stored = std::make_shared<const T>(std::move(value));
    Entry entry;
    entry.value = stored;
    if constexpr (HasValidate<T>::value) {
      entry.validate = [stored] { return stored->Validate(); };
    }
    entries_[std::type_index(typeid(T))] = std::move(entry);
  }

  template <typename T>
  const T& Get() const {
    auto it = entries_.find(std::type_index(typeid(T)));
    if (it == entries_.end()) {
      static const T* const defaults = new T();
      return *defaults;
    }
    return *static_cast<const T*>(it->second.value.get());
  }

  template <typename T>
  bool Has() const {
    return entries_.find(std::type_index(typeid(T))) != entries_.end();
  }

  // The first error of a stored options struct's Validate(); OK otherwise.
  absl::Status Validate() const;

 private:
  template <typename T, typename = void>
  struct HasValidate : std::false_type {};
  template <typename T>
  struct HasValidate<
      T, std::void_t<decltype(std::declval<const T&>().Validate())>>
      : std::true_type {};

  struct Entry {
    std::shared_ptr<const void> value;
    std::function<absl::Status()> validate;  // null: nothing to check
  };
  absl::flat_hash_map<std::type_index, Entry> entries_;
};

// `options` read from `flags` (e.g. "--staleness") when its Validate()
// passes; else INVALID_ARGUMENT naming the flags and the fault.
template <typename T>
absl::StatusOr<T> ValidatedFromFlags(T options, const char* flags) {
  if (absl::Status status = options.Validate(); !status.ok()) {
    return absl::InvalidArgumentError(
        std::string(flags) + ": " + std::string(status.message()));
  }
  return options;
}

// Fills `set` with one options struct read from this binary's flags.
using OptionFlagsReader = std::function<absl::Status(StrategyOptionSet& set)>;

// Registers `reader` (static init; use the macro). Returns true.
bool RegisterOptionFlagsReader(OptionFlagsReader reader);

// Runs every registered reader on `set`; the first error names the flag.
absl::Status ReadOptionFlags(StrategyOptionSet& set);

// In the .cc that defines T's flags: `from_flags` is a function
// absl::StatusOr<T>() reading them.
#define RINGSIDE_REGISTER_OPTION_FLAGS(T, from_flags)                       \
  static const bool ringside_option_flags_registered_##T =                  \
      ::ringside::RegisterOptionFlagsReader(                                \
          [](::ringside::StrategyOptionSet& set) -> ::absl::Status {        \
            ::absl::StatusOr<T> value = from_flags();                       \
            if (!value.ok()) return value.status();                         \
            set.Set<T>(*std::move(value));                                  \
            return ::absl::OkStatus();                                      \
          })

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGY_OPTION_SET_H_
