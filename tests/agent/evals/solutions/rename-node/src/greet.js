const { displayName } = require("./users");

function greet(user) {
  return `Hello, ${displayName(user)}!`;
}

function farewell(user) {
  return `Goodbye, ${displayName(user)}.`;
}

module.exports = { greet, farewell };
