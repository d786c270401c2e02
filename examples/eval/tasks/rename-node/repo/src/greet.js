const { getUserName } = require("./users");

function greet(user) {
  return `Hello, ${getUserName(user)}!`;
}

function farewell(user) {
  return `Goodbye, ${getUserName(user)}.`;
}

module.exports = { greet, farewell };
