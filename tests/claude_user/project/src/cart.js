function total(items) {
  return items.reduce((sum, item) => sum + item.price * item.count, 0);
}
module.exports = { total };
