// Errors a user can cause (a bad policy file, a bad scenario, a bad context, an unknown name).
// The command line turns a UserError into its message and exit status 2; anything else that
// escapes is an internal error (exit status 1). The message names the place: file, line and
// column for text, section and byte offset for binary input.
// It lives in util/, the base every layer may include (util/ includes nothing of the others),
// so that the core, the engines and the command line share it without depending on each other.
#pragma once

#include <stdexcept>
#include <string>

namespace locksim {

class UserError : public std::runtime_error {
  public:
    explicit UserError(const std::string &what) : std::runtime_error(what) {}
};

// Runs `f`; a UserError it throws gets `place` ("file:line:column") in front: for what is found
// only later, when the named thing is used (a workload set up, a profile loaded). An empty
// place leaves the message as it is.
template <class F>
decltype(auto) at_place(const std::string &place, F &&f) {
    try {
        return f();
    } catch (const UserError &e) {
        if (place.empty()) throw;
        throw UserError(place + ": " + e.what());
    }
}

}  // namespace locksim
