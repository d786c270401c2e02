// { first: "Ada", last: "Lovelace" } -> "Ada Lovelace"; a user without a last name is their first name.
function displayName(user) {
  return user.last ? `${user.first} ${user.last}` : user.first;
}

module.exports = { displayName };
